// What the speech suite measures of PCM16: its length in seconds and its pitch, so that audio labelled with
// the requested rate but never resampled (22,050 Hz samples called 8,000 Hz play 2.75× slow and 2.75× low)
// cannot pass.
import type { Pcm } from '../speech.ts'

export const seconds = (p: Pcm): number => p.samples.length / p.sampleRate

const FRAME_MS = 20

/**
 * The audio's typical frequency, in Hz: half the zero-crossing rate of its louder 20 ms frames (those within
 * 20 dB of the loudest), their median. Tones and voiced speech under 4 kHz measure the same at 8, 16 and
 * 24 kHz; samples played at the wrong rate measure off by the rates' ratio. Null when nothing is heard.
 */
export function pitchHz(p: Pcm): number | null {
  const frame = Math.max(2, Math.round((p.sampleRate * FRAME_MS) / 1000))
  const frames: { rms: number; crossings: number }[] = []
  for (let start = 0; start + frame <= p.samples.length; start += frame) {
    let energy = 0
    let crossings = 0
    for (let i = start; i < start + frame; i++) {
      const s = p.samples[i]
      energy += s * s
      if (i > start && s >= 0 !== p.samples[i - 1] >= 0) crossings++
    }
    frames.push({ rms: Math.sqrt(energy / frame), crossings })
  }
  const loudest = Math.max(0, ...frames.map((f) => f.rms))
  if (loudest < 100) return null
  const rates = frames
    .filter((f) => f.rms >= loudest / 10)
    .map((f) => (f.crossings / 2) * (p.sampleRate / frame))
    .sort((a, b) => a - b)
  return rates[Math.floor(rates.length / 2)]
}

/** Words as a transcript may differ from the text and still be right: case, punctuation and spacing. */
export const words = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9 ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/** The samples of several chunks, in order. */
export function joinSamples(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
