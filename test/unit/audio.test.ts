// server/lib/audio.ts: μ-law, resampling, WAV and the tone-text codec the offline speech provider rests on.
import { describe, expect, it } from 'vitest'
import {
  concatPcm,
  decodeMulaw,
  decodeToneSpeech,
  decodeToneText,
  decodeWav,
  encodeMulaw,
  encodeToneText,
  encodeWav,
  MAX_WAV_BYTES,
  resample,
  rms,
  StreamResampler,
  TONE_HIGH_HZ,
  TONE_LOW_HZ,
  TONE_SYMBOL_MS,
  toToneAscii,
} from '~/lib/audio'

// A seeded generator keeps the random cases reproducible: a failure names its seed.
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const randomAscii = (r: () => number, max = 200) => {
  const n = 1 + Math.floor(r() * max)
  let s = ''
  for (let i = 0; i < n; i++) s += String.fromCharCode(32 + Math.floor(r() * 95))
  return s
}
const sine = (freq: number, rate: number, seconds: number, amp = 10000) =>
  Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    Math.round(amp * Math.sin((2 * Math.PI * freq * i) / rate)),
  )
const concat = (...parts: Int16Array[]) => concatPcm(parts)
const noise = (r: () => number, n: number, amp: number) =>
  Int16Array.from({ length: n }, () => Math.round((r() * 2 - 1) * amp))

// A single-bin DFT magnitude, to check what frequency a resampled tone ended up at.
function amplitudeAt(x: Int16Array, rate: number, freq: number) {
  let re = 0
  let im = 0
  for (let i = 0; i < x.length; i++) {
    re += x[i] * Math.cos((2 * Math.PI * freq * i) / rate)
    im -= x[i] * Math.sin((2 * Math.PI * freq * i) / rate)
  }
  return (2 * Math.hypot(re, im)) / x.length
}

describe('μ-law', () => {
  it('matches the G.711 reference points', () => {
    expect([...encodeMulaw(Int16Array.from([0, -1, 32767, -32768, 1000, -1000]))]).toEqual([
      0xff, 0x7f, 0x80, 0x00, 0xce, 0x4e,
    ])
    expect([...decodeMulaw(Uint8Array.from([0xff, 0x7f, 0x80, 0x00]))]).toEqual([0, 0, 32124, -32124])
  })

  it('decode then encode is the identity on every byte except negative zero', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    const back = encodeMulaw(decodeMulaw(all))
    for (let i = 0; i < 256; i++) expect(back[i], `byte ${i}`).toBe(i === 0x7f ? 0xff : i)
  })

  it('round-trips PCM within the quantisation step of its segment', () => {
    const x = Int16Array.from({ length: 65536 }, (_, i) => i - 32768)
    const y = decodeMulaw(encodeMulaw(x))
    const off: number[] = []
    for (let i = 0; i < x.length; i++) {
      const v = Math.max(-32124, Math.min(32124, x[i]))
      // G.711 truncates to its segment's step, 2^(exponent+3): at most 1/16 of the value, or 8 near zero.
      if (Math.abs(y[i] - v) > Math.abs(v) * 0.0625 + 8) off.push(x[i])
    }
    expect(off).toEqual([])
  })
})

describe('resample', () => {
  it('is an exact copy at equal rates (a new array)', () => {
    const x = Int16Array.from([1, -2, 3, 32767, -32768])
    const y = resample(x, 8000, 8000)
    expect([...y]).toEqual([...x])
    expect(y).not.toBe(x)
  })

  it('scales the length and keeps a tone at its frequency and level', () => {
    for (const [from, to] of [
      [24000, 8000],
      [8000, 16000],
      [16000, 8000],
      [44100, 8000],
      [8000, 24000],
    ]) {
      const x = sine(1000, from, 0.5)
      const y = resample(x, from, to)
      expect(y.length).toBe(Math.round(x.length * (to / from)))
      // Away from the edges the level holds within 1 dB.
      const mid = y.subarray(Math.round(to * 0.05), Math.round(to * 0.45))
      expect(amplitudeAt(mid, to, 1000)).toBeGreaterThan(10000 * 0.89)
      expect(amplitudeAt(mid, to, 1000)).toBeLessThan(10000 * 1.12)
    }
  })

  it('filters what would alias when going down', () => {
    // 6 kHz at 24 kHz would fold to 2 kHz at 8 kHz without the low-pass.
    const y = resample(sine(6000, 24000, 0.5), 24000, 8000)
    expect(rms(y, 200, y.length - 200)).toBeLessThan(200)
  })

  it('keeps DC and handles empty and one-sample input', () => {
    expect([...resample(new Int16Array(100).fill(1234), 8000, 11025)].every((v) => v === 1234)).toBe(true)
    expect(resample(new Int16Array(0), 8000, 16000).length).toBe(0)
    expect([...resample(Int16Array.from([500]), 8000, 16000)]).toEqual([500, 500])
    expect(() => resample(new Int16Array(1), 0, 8000)).toThrow(RangeError)
  })
})

describe('StreamResampler', () => {
  // Pushes x in pieces of random sizes (empty and one-sample pieces included), then flushes.
  const streamed = (x: Int16Array, from: number, to: number, r: () => number, max: number) => {
    const s = new StreamResampler(from, to)
    const parts: Int16Array[] = []
    let pushes = 0
    for (let at = 0; at < x.length; pushes++) {
      const pick = r()
      const size = pick < 0.1 ? 0 : pick < 0.2 ? 1 : 1 + Math.floor(r() * max)
      parts.push(s.push(x.subarray(at, at + size)))
      at += size
    }
    parts.push(s.flush())
    return { out: concat(...parts), parts, pushes }
  }

  for (const [from, to] of [
    [24000, 8000],
    [24000, 16000],
  ]) {
    it(`gives exactly resample()'s samples chunk by chunk, ${from} → ${to} Hz`, () => {
      const r = rng(from + to)
      for (let n = 0; n < 25; n++) {
        // Speech-like: tone text with noise, at random lengths including a few samples.
        const length = n < 3 ? n * 7 : Math.floor(r() * from * 0.5)
        const x = concat(noise(r, length >> 2, 3000), encodeToneText(randomAscii(r, 12), from)).subarray(0, length)
        const whole = resample(x, from, to)
        // Network pieces: from a few samples to a few thousand.
        const max = [3, 50, 2000, 20000][n % 4]
        const { out, parts } = streamed(x, from, to, r, max)
        expect(out.length, `case ${n}`).toBe(whole.length)
        expect([...out], `case ${n}: ${x.length} samples in pieces of up to ${max}`).toEqual([...whole])
        if (x.length > from / 10 && max >= 2000) expect(parts.filter((p) => p.length).length).toBeGreaterThan(1)
      }
    })
  }

  it('answers each piece as soon as its window is complete, holding only a window of input', () => {
    const s = new StreamResampler(24000, 8000)
    const x = sine(1000, 24000, 1)
    // A 20 ms piece already yields most of its output; the rest waits for the next piece's samples.
    const first = s.push(x.subarray(0, 480))
    expect(first.length).toBeGreaterThan(140)
    expect(first.length).toBeLessThanOrEqual(160)
    let total = first.length
    for (let at = 480; at < x.length; at += 480) total += s.push(x.subarray(at, at + 480)).length
    expect(total + s.flush().length).toBe(8000)
    expect((s as unknown as { held: Int16Array }).held.length).toBeLessThan(100)
  })

  it('copies through at equal rates, refuses bad rates and pushes after flush', () => {
    const s = new StreamResampler(16000, 16000)
    const x = Int16Array.from([1, -2, 3])
    const y = s.push(x)
    expect([...y]).toEqual([1, -2, 3])
    expect(y).not.toBe(x)
    expect(s.flush().length).toBe(0)
    expect(() => s.push(x)).toThrow(/after flush/)
    expect(() => new StreamResampler(0, 8000)).toThrow(RangeError)
    const empty = new StreamResampler(24000, 8000)
    expect(empty.flush().length).toBe(0)
  })
})

describe('WAV', () => {
  const header = (format: number, channels: number, rate: number, bits: number) => {
    const b = Buffer.alloc(24)
    b.write('fmt ', 0, 'ascii')
    b.writeUInt32LE(16, 4)
    b.writeUInt16LE(format, 8)
    b.writeUInt16LE(channels, 10)
    b.writeUInt32LE(rate, 12)
    b.writeUInt32LE((rate * channels * bits) / 8, 16)
    b.writeUInt16LE((channels * bits) / 8, 20)
    b.writeUInt16LE(bits, 22)
    return b
  }
  const chunk = (id: string, body: Buffer, sizeField = body.length) => {
    const b = Buffer.alloc(8 + body.length + (body.length & 1))
    b.write(id, 0, 'ascii')
    b.writeUInt32LE(sizeField, 4)
    body.copy(b, 8)
    return b
  }
  const riff = (...chunks: Buffer[]) => {
    const body = Buffer.concat([Buffer.from('WAVE'), ...chunks])
    const head = Buffer.alloc(8)
    head.write('RIFF', 0, 'ascii')
    head.writeUInt32LE(body.length, 4)
    return Buffer.concat([head, body])
  }

  it('round-trips mono PCM16 with a canonical 44-byte header', () => {
    const x = Int16Array.from({ length: 1001 }, (_, i) => ((i * 7919) % 65536) - 32768)
    const wav = encodeWav(x, 16000)
    expect(wav.length).toBe(44 + 2002)
    expect(wav.subarray(0, 4).toString()).toBe('RIFF')
    expect(wav.readUInt32LE(4)).toBe(36 + 2002)
    const { samples, sampleRate } = decodeWav(wav)
    expect(sampleRate).toBe(16000)
    expect([...samples]).toEqual([...x])
  })

  it('downmixes interleaved stereo by averaging', () => {
    const wav = encodeWav(Int16Array.from([100, 300, -32768, -32768, 32767, -32767, 1, 2]), 8000, 2)
    expect(wav.readUInt16LE(22)).toBe(2)
    expect([...decodeWav(wav).samples]).toEqual([200, -32768, 0, 2])
    expect(() => encodeWav(Int16Array.from([1, 2, 3]), 8000, 2)).toThrow(/channels/)
  })

  it('reads 32-bit float, clipping out-of-range values and NaN', () => {
    const f = Buffer.alloc(5 * 4)
    for (const [i, v] of [0, 0.5, -1, 2, Number.NaN].entries()) f.writeFloatLE(v, i * 4)
    const { samples, sampleRate } = decodeWav(riff(header(3, 1, 24000, 32), chunk('data', f)))
    expect(sampleRate).toBe(24000)
    expect([...samples]).toEqual([0, 16384, -32767, 32767, 0])
  })

  it('reads 8-bit μ-law', () => {
    const x = sine(440, 8000, 0.1)
    const wav = riff(header(7, 1, 8000, 8), chunk('data', encodeMulaw(x)))
    expect([...decodeWav(wav).samples]).toEqual([...decodeMulaw(encodeMulaw(x))])
  })

  it('walks past unknown chunks with odd sizes and their pad byte', () => {
    const pcm = Buffer.from(Int16Array.from([1, -2, 3]).buffer)
    const wav = riff(
      chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00Lavf\x00')),
      header(1, 1, 8000, 16),
      chunk('junk', Buffer.from('abc')),
      chunk('data', pcm),
    )
    expect([...decodeWav(wav).samples]).toEqual([1, -2, 3])
  })

  it('reads WAVE_FORMAT_EXTENSIBLE float and streamed data sizes (0xFFFFFFFF), dropping a partial frame', () => {
    const fmt = Buffer.alloc(8 + 40)
    fmt.write('fmt ', 0, 'ascii')
    fmt.writeUInt32LE(40, 4)
    fmt.writeUInt16LE(0xfffe, 8)
    fmt.writeUInt16LE(2, 10)
    fmt.writeUInt32LE(48000, 12)
    fmt.writeUInt16LE(32, 22)
    fmt.writeUInt16LE(3, 8 + 24)
    const f = Buffer.alloc(2 * 4 * 2 + 3)
    for (const [i, v] of [0.5, 0.25, -0.5, -0.5].entries()) f.writeFloatLE(v, i * 4)
    const data = Buffer.concat([Buffer.from('data'), Buffer.from([0xff, 0xff, 0xff, 0xff]), f])
    const { samples, sampleRate } = decodeWav(riff(fmt, data))
    expect(sampleRate).toBe(48000)
    // (0.5·32767 + 0.25·32767) / 2 and −0.5·32767, rounded half up.
    expect([...samples]).toEqual([12288, -16383])
  })

  it('refuses what it cannot read with a clear error', () => {
    const data = chunk('data', Buffer.alloc(4))
    expect(() => decodeWav(Buffer.from('not a wav at all'))).toThrow('WAV: not a RIFF/WAVE file')
    expect(() => decodeWav(riff(header(1, 1, 8000, 24), data))).toThrow(/unsupported encoding \(format 1, 24-bit\)/)
    expect(() => decodeWav(riff(header(2, 1, 8000, 4), data))).toThrow(/unsupported encoding \(format 2/)
    expect(() => decodeWav(riff(header(1, 1, 8000, 16)))).toThrow('WAV: no data chunk')
    expect(() => decodeWav(riff(data))).toThrow('WAV: no fmt chunk')
    expect(() => decodeWav(riff(header(1, 0, 8000, 16), data))).toThrow(/zero channels/)
    expect(() => decodeWav(riff(header(1, 1, 0, 16), data))).toThrow(/sample rate/)
    expect(() => decodeWav(new Uint8Array(MAX_WAV_BYTES + 1))).toThrow(/over the 50 MB limit/)
  })
})

describe('rms', () => {
  it('measures a range and is 0 on an empty one', () => {
    expect(rms(Int16Array.from([3, -4, 3, -4]))).toBeCloseTo(Math.sqrt(12.5))
    expect(rms(Int16Array.from([0, 0, 10, 10]), 2, 4)).toBe(10)
    expect(rms(new Int16Array(0))).toBe(0)
    expect(rms(Int16Array.from([5]), 3, 9)).toBe(0)
    expect(rms(sine(440, 8000, 1), 0, 8000)).toBeCloseTo(10000 / Math.SQRT2, -1)
  })
})

describe('tone text', () => {
  it('uses 100 well-separated tone pairs under 3.4 kHz', () => {
    expect(TONE_SYMBOL_MS).toBe(40)
    const all = [...TONE_LOW_HZ, ...TONE_HIGH_HZ]
    expect(new Set(all).size).toBe(20)
    const sorted = [...all].sort((a, b) => a - b)
    for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBeGreaterThanOrEqual(100)
    expect(sorted[sorted.length - 1]).toBeLessThan(3400)
  })

  it('maps text to printable ASCII', () => {
    expect(toToneAscii('Café\tüber\nnaïve')).toBe('Cafe uber naive')
    expect(toToneAscii('日本 😀!')).toBe('?? ?!')
    expect(toToneAscii('\u0000~')).toBe('?~')
  })

  it('lasts one symbol per character, padded to 150 words per minute, and is loud with no silence inside', () => {
    const short = encodeToneText('Hello there, how are you today?', 8000)
    // 6 words at 150 wpm = 2.4 s, longer than 31 × 40 ms.
    expect(short.length).toBe(Math.round(2.4 * 8000))
    const dense = 'Supercalifragilisticexpialidocious'
    expect(encodeToneText(dense, 16000).length).toBe(dense.length * 640)
    expect(encodeToneText('one two', 8000, { wordsPerMinute: 300 }).length).toBe(Math.round(0.4 * 8000))
    expect(encodeToneText('', 8000).length).toBe(0)
    // Whitespace alone still counts as one word.
    expect(encodeToneText('  ', 8000).length).toBe(0.4 * 8000)
    expect(rms(short)).toBeGreaterThan(5000)
    for (let i = 0; i + 80 <= short.length; i += 80) expect(rms(short, i, i + 80)).toBeGreaterThan(1000)
    expect(Math.max(...short.map(Math.abs))).toBeLessThan(32768)
    expect(() => encodeToneText('x', 4000)).toThrow(RangeError)
    expect(() => encodeToneText('x', 8000, { wordsPerMinute: 0 })).toThrow(RangeError)
  })

  it('decodes its own output exactly at common rates', () => {
    for (const rate of [8000, 11025, 16000, 22050, 24000, 44100, 48000]) {
      const text = 'Hi! Call +1 (555) 010-9999 ~ {ok} "yes" \\ `q`'
      expect(decodeToneText(encodeToneText(text, rate), rate), `${rate} Hz`).toBe(text)
    }
  })

  it('stops at the filler, so padding never leaks into the text', () => {
    const x = encodeToneText('a', 8000, { wordsPerMinute: 10 })
    expect(x.length).toBe(6 * 8000)
    expect(decodeToneText(x, 8000)).toBe('a')
    expect(decodeToneText(encodeToneText('   ', 8000), 8000)).toBe('   ')
  })

  it('answers null when there is no tone', () => {
    const r = rng(7)
    expect(decodeToneText(new Int16Array(0), 8000)).toBeNull()
    expect(decodeToneText(new Int16Array(16000), 8000)).toBeNull()
    expect(decodeToneText(noise(r, 16000, 400), 8000)).toBeNull()
    expect(decodeToneText(noise(r, 16000, 20000), 8000)).toBeNull()
    expect(decodeToneText(sine(1000, 8000, 1), 8000)).toBeNull()
    const spikes = new Int16Array(16000)
    spikes[100] = 30000
    spikes[9000] = -30000
    expect(decodeToneText(spikes, 8000)).toBeNull()
  })

  // Every transformation the phone path applies, with random silence or low noise around the utterance
  // at a random, non-symbol-aligned offset.
  const paths: [string, number, (x: Int16Array) => [Int16Array, number]][] = [
    ['plain 8 kHz', 8000, (x) => [x, 8000]],
    ['μ-law round trip', 8000, (x) => [decodeMulaw(encodeMulaw(x)), 8000]],
    ['24 kHz → 8 kHz', 24000, (x) => [resample(x, 24000, 8000), 8000]],
    ['8 kHz → 16 kHz', 8000, (x) => [resample(x, 8000, 16000), 16000]],
    [
      '24 kHz → 8 kHz → μ-law → 16 kHz',
      24000,
      (x) => [resample(decodeMulaw(encodeMulaw(resample(x, 24000, 8000))), 8000, 16000), 16000],
    ],
    ['WAV 24 kHz → 8 kHz', 24000, (x) => [resample(decodeWav(encodeWav(x, 24000)).samples, 24000, 8000), 8000]],
  ]
  for (const [name, rate, path] of paths) {
    it(`survives ${name}: random ASCII up to 200 characters, any lead-in`, () => {
      const r = rng(name.length * 1000 + rate)
      for (let n = 0; n < 40; n++) {
        const text = randomAscii(r)
        const wpm = 75 + r() * 225
        const pad = (s: number) => (r() < 0.5 ? new Int16Array(s) : noise(r, s, 50 + r() * 450))
        const lead = Math.floor(r() * rate * (r() < 0.3 ? 2 : 0.1))
        const x = concat(pad(lead), encodeToneText(text, rate, { wordsPerMinute: wpm }), pad(Math.floor(r() * rate)))
        const [y, yRate] = path(x)
        expect(decodeToneText(y, yRate), `case ${n}: ${JSON.stringify(text)}`).toBe(text)
      }
      // About 2 s on an idle machine; room for a loaded one.
    }, 30_000)
  }

  it('reads an utterance cut just after its last symbol and one with its fade trimmed', () => {
    const text = 'no padding here at all, none'
    const x = encodeToneText(text, 8000, { wordsPerMinute: 10_000 })
    expect(x.length).toBe(text.length * 320)
    expect(decodeToneText(x, 8000)).toBe(text)
    expect(decodeToneText(x.subarray(16), 8000)).toBe(text)
    expect(decodeToneText(x.subarray(0, x.length - 60), 8000)).toBe(text)
    // Under 60% of the last symbol's analysed span left: that symbol is dropped, the rest still reads.
    expect(decodeToneText(x.subarray(0, x.length - 200), 8000)).toBe(text.slice(0, -1))
  })
})

describe('decodeToneSpeech', () => {
  it('reads every piece of an utterance in which the speaker paused, in order', () => {
    for (const rate of [8000, 16000]) {
      const a = encodeToneText('Could I order', rate)
      const b = encodeToneText('two rye loaves', rate)
      const pause = new Int16Array(Math.round(rate * 0.3))
      const all = new Int16Array(a.length + pause.length + b.length + pause.length)
      all.set(a, 0)
      all.set(b, a.length + pause.length)
      expect(decodeToneSpeech(all, rate), `${rate} Hz`).toBe('Could I order two rye loaves')
      expect(decodeToneSpeech(a, rate)).toBe('Could I order')
    }
    expect(decodeToneSpeech(new Int16Array(8000), 8000)).toBeNull()
  })
})
