// Pure audio helpers of the widget's voice chat (no DOM): unit-tested on Node (test/unit/widget-audio.test.ts).
// The microphone runs at the AudioContext's own rate (44.1 or 48 kHz: some browsers refuse to connect a
// microphone to a context of another rate), and the server takes 16 kHz PCM16, so the widget downsamples.

export const VOICE_RATE = 16_000

/** Float samples (-1..1) as PCM16, clamped. */
export function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length)
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]))
    out[i] = s < 0 ? Math.round(s * 32768) : Math.round(s * 32767)
  }
  return out
}

/** PCM16 as float samples for an AudioBuffer. */
export function fromPcm16(pcm: Int16Array): Float32Array<ArrayBuffer> {
  const out = new Float32Array(pcm.length)
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i] / 32768
  return out
}

/**
 * A streaming downsampler: each output sample is the mean of the input samples it covers (a box filter,
 * enough to keep speech above 8 kHz from folding back), carrying the remainder between calls.
 */
export function createDownsampler(fromRate: number, toRate = VOICE_RATE) {
  const step = fromRate / toRate
  let carry = new Float32Array(0)
  let pos = 0
  return (input: Float32Array): Float32Array => {
    if (fromRate === toRate) return input.slice()
    const buf = new Float32Array(carry.length + input.length)
    buf.set(carry)
    buf.set(input, carry.length)
    const out: number[] = []
    while (pos + step <= buf.length) {
      const from = Math.floor(pos)
      const to = Math.max(from + 1, Math.floor(pos + step))
      let sum = 0
      for (let i = from; i < to; i++) sum += buf[i]
      out.push(sum / (to - from))
      pos += step
    }
    const used = Math.floor(pos)
    carry = buf.slice(used)
    pos -= used
    return Float32Array.from(out)
  }
}

/** Server → browser text messages of the voice protocol (server/domain/widget/voice.ts). */
export type VoiceServerMessage =
  | { type: 'ready'; conversation_id: string; sample_rate: number }
  | { type: 'caption'; role: 'visitor' | 'agent'; text: string }
  | { type: 'mark'; name: string }
  | { type: 'clear' }
  | { type: 'end'; reason: string }
  | { type: 'error'; code: string; message: string }

export function parseServerMessage(text: string): VoiceServerMessage | null {
  try {
    const m = JSON.parse(text) as { type?: unknown }
    return m && typeof m.type === 'string' ? (m as VoiceServerMessage) : null
  } catch {
    return null
  }
}

/** The voice socket's URL on the API origin (the token is public: it is in the page's snippet). */
export const voiceUrl = (origin: string, token: string) =>
  `${origin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(token)}`
