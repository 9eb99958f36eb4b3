// Decodes an MP3 the way a player does (mpg123, built to WebAssembly): a recording "plays" when it decodes
// without errors to the channels and length it claims.
import { MPEGDecoder } from 'mpg123-decoder'

export interface DecodedMp3 {
  sampleRate: number
  channels: Float32Array[]
  seconds: number
  errors: number
}

export async function decodeMp3(bytes: Uint8Array): Promise<DecodedMp3> {
  const decoder = new MPEGDecoder()
  await decoder.ready
  try {
    const out = decoder.decode(bytes)
    return {
      sampleRate: out.sampleRate,
      channels: out.channelData,
      seconds: out.samplesDecoded / out.sampleRate,
      errors: out.errors.length,
    }
  } finally {
    decoder.free()
  }
}

/** Root mean square of a stretch of decoded samples (−1…1): 0 is silence. */
export const rms = (samples: Float32Array) => {
  let sum = 0
  for (const x of samples) sum += x * x
  return samples.length ? Math.sqrt(sum / samples.length) : 0
}
