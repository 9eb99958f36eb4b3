// The widget's voice chat audio helpers (widget/src/audio.ts): the microphone's 44.1/48 kHz floats become
// the server's 16 kHz PCM16, block by block, without losing the signal or drifting in length.
import { describe, expect, it } from 'vitest'
import { createDownsampler, fromPcm16, parseServerMessage, toPcm16, voiceUrl } from '../../widget/src/audio'

const sine = (hz: number, rate: number, seconds: number, amp = 0.5) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => amp * Math.sin((2 * Math.PI * hz * i) / rate))

/** Zero crossings per second ≈ 2 × frequency. */
const crossings = (x: Float32Array, rate: number) => {
  let n = 0
  for (let i = 1; i < x.length; i++) if (x[i - 1] < 0 !== x[i] < 0) n++
  return n / (x.length / rate) / 2
}

describe('widget voice audio', () => {
  it('downsamples 48 kHz and 44.1 kHz to 16 kHz keeping a tone, streamed in blocks like one piece', () => {
    for (const rate of [48_000, 44_100]) {
      const input = sine(440, rate, 1)
      const whole = createDownsampler(rate)(input)
      const stream = createDownsampler(rate)
      const parts: number[] = []
      for (let at = 0; at < input.length; at += 4096) parts.push(...stream(input.subarray(at, at + 4096)))
      expect(Math.abs(whole.length - 16_000)).toBeLessThanOrEqual(1)
      expect(parts.length).toBe(whole.length)
      // At 44.1 kHz a window edge may fall one input sample apart (float positions): within a few percent.
      expect(Math.max(...parts.map((v, i) => Math.abs(v - whole[i])))).toBeLessThan(rate === 48_000 ? 1e-6 : 0.05)
      expect(crossings(whole, 16_000)).toBeGreaterThan(430)
      expect(crossings(whole, 16_000)).toBeLessThan(450)
      expect(Math.max(...whole)).toBeGreaterThan(0.45)
    }
    // 16 kHz in is a copy.
    const same = sine(300, 16_000, 0.1)
    expect(createDownsampler(16_000)(same)).toEqual(same)
  })

  it('converts floats to PCM16 with clamping, and back', () => {
    expect([...toPcm16(Float32Array.from([0, 1, -1, 2, -2, 0.5]))]).toEqual([0, 32767, -32768, 32767, -32768, 16384])
    const back = fromPcm16(Int16Array.from([0, 16384, -32768]))
    expect([...back]).toEqual([0, 0.5, -1])
  })

  it('parses the server messages and builds the socket URL', () => {
    expect(parseServerMessage('{"type":"clear"}')).toEqual({ type: 'clear' })
    expect(parseServerMessage('not json')).toBeNull()
    expect(parseServerMessage('{"no":"type"}')).toBeNull()
    expect(voiceUrl('https://api.example.com', 'wpk_a+b')).toBe('wss://api.example.com/v1/widget/voice?token=wpk_a%2Bb')
    expect(voiceUrl('http://127.0.0.1:3000', 'wpk_x')).toBe('ws://127.0.0.1:3000/v1/widget/voice?token=wpk_x')
  })
})
