// Pure audio helpers for the phone path. Everything the host and the speech providers exchange is PCM16
// mono in an Int16Array (server/kit/speech.ts); these convert it to and from the wire formats (G.711 μ-law,
// WAV), change its rate, measure it, and carry text as tones for the offline `simulated` speech provider.

/** decodeWav refuses inputs over this size: a WAV is read whole into memory. */
export const MAX_WAV_BYTES = 50 * 1024 * 1024

const clamp16 = (v: number) => Math.min(32767, Math.max(-32768, v))

/**
 * The sample rates a speech provider's audio may have: 8–48 kHz. Resampling expands audio by the ratio of the
 * rates, so a WAV header claiming 1 Hz would turn each sample into 8,000 at the phone's rate (a few KB from a
 * hostile or broken speech server, gigabytes in memory); such audio is refused (decisions "Abuse and cost").
 */
export const SPEECH_RATES = { min: 8000, max: 48_000 } as const

/** Throws a RangeError naming the rate unless it is a whole number of Hz within SPEECH_RATES. */
export function checkSpeechRate(sampleRate: number): void {
  if (!Number.isInteger(sampleRate) || sampleRate < SPEECH_RATES.min || sampleRate > SPEECH_RATES.max)
    throw new RangeError(`sample rate ${sampleRate} Hz is outside ${SPEECH_RATES.min}–${SPEECH_RATES.max} Hz`)
}

// ---------------------------------------------------------------------------------------------------------
// G.711 μ-law (ITU-T G.711, the segment/mantissa form with the 0x84 bias; bytes are stored inverted).

const MULAW_BIAS = 0x84
const MULAW_CLIP = 32635

function linearToMulaw(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0
  let s = sign ? -sample : sample
  if (s > MULAW_CLIP) s = MULAW_CLIP
  s += MULAW_BIAS
  let exponent = 7
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--
  const mantissa = (s >> (exponent + 3)) & 0x0f
  return ~(sign | (exponent << 4) | mantissa) & 0xff
}

const MULAW_TABLE = (() => {
  const t = new Int16Array(256)
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff
    const magnitude = (((u & 0x0f) << 3) + MULAW_BIAS) << ((u >> 4) & 0x07)
    t[i] = u & 0x80 ? MULAW_BIAS - magnitude : magnitude - MULAW_BIAS
  }
  return t
})()

/** PCM16 samples to G.711 μ-law bytes (one byte per sample). */
export function encodeMulaw(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length)
  for (let i = 0; i < samples.length; i++) out[i] = linearToMulaw(samples[i])
  return out
}

/** G.711 μ-law bytes to PCM16 samples. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length)
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_TABLE[bytes[i]]
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Resampling: band-limited interpolation with a Hann-windowed sinc. Plain linear interpolation would fold
// everything above the new Nyquist back into the band when going down (24 kHz TTS to 8 kHz phone audio
// turns sibilants into hiss), so the kernel's cutoff follows the lower of the two rates.

const ZERO_CROSSINGS = 8
// Just under Nyquist: the window's transition band then sits mostly above the passband.
const CUTOFF = 0.9
const TABLE_STEPS = 256

function kernelTable(cutoff: number, halfWidth: number): Float64Array {
  const n = Math.ceil(halfWidth * TABLE_STEPS) + 2
  const t = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const x = i / TABLE_STEPS
    if (x >= halfWidth) break
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x)
    t[i] = cutoff * sinc * (0.5 + 0.5 * Math.cos((Math.PI * x) / halfWidth))
  }
  return t
}

/** Converts PCM16 from one sample rate to another; an exact copy when the rates are equal. */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  for (const r of [fromRate, toRate])
    if (!Number.isFinite(r) || r <= 0) throw new RangeError(`resample: invalid sample rate ${r}`)
  if (fromRate === toRate) return new Int16Array(samples)
  const n = samples.length
  if (n === 0) return new Int16Array(0)
  const outLength = Math.max(1, Math.round((n * toRate) / fromRate))
  const out = new Int16Array(outLength)
  const step = fromRate / toRate
  // Cutoff relative to the input's Nyquist; going up, the input band is already the limit.
  const cutoff = CUTOFF * Math.min(1, toRate / fromRate)
  const halfWidth = ZERO_CROSSINGS / cutoff
  const table = kernelTable(cutoff, halfWidth)
  for (let i = 0; i < outLength; i++) {
    const pos = i * step
    const lo = Math.max(0, Math.ceil(pos - halfWidth))
    const hi = Math.min(n - 1, Math.floor(pos + halfWidth))
    let acc = 0
    let weight = 0
    for (let k = lo; k <= hi; k++) {
      const x = Math.abs(pos - k) * TABLE_STEPS
      const j = Math.floor(x)
      const h = table[j] + (table[j + 1] - table[j]) * (x - j)
      acc += samples[k] * h
      weight += h
    }
    // Normalising by the summed weights keeps DC gain at 1, also near the edges where the kernel is cut.
    out[i] = weight > 0 ? clamp16(Math.round(acc / weight)) : samples[Math.min(n - 1, Math.round(pos))]
  }
  return out
}

/**
 * resample() for audio that arrives in pieces (streamed speech): push() each piece as it comes and play
 * what it answers, then flush() once at the end. The concatenated output is exactly resample() of the
 * concatenated input. An output sample needs the input up to half a kernel width past it, so a push answers
 * the samples whose window is complete and keeps only the input that later windows still reach (one window,
 * about 54 samples from 24 kHz to 8 kHz), never the whole signal.
 */
export class StreamResampler {
  /** Input samples per output sample. */
  private readonly step: number
  private readonly halfWidth: number
  /** The kernel, or null at equal rates (copied through, as resample() does). */
  private readonly table: Float64Array | null
  /** Input not yet behind every future window; held[0] is input sample `base`. */
  private held = new Int16Array(0)
  private base = 0
  private received = 0
  /** Index of the next output sample. */
  private next = 0
  private flushed = false

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    for (const r of [fromRate, toRate])
      if (!Number.isFinite(r) || r <= 0) throw new RangeError(`resample: invalid sample rate ${r}`)
    // The same kernel as resample().
    const cutoff = CUTOFF * Math.min(1, toRate / fromRate)
    this.step = fromRate / toRate
    this.halfWidth = ZERO_CROSSINGS / cutoff
    this.table = fromRate === toRate ? null : kernelTable(cutoff, this.halfWidth)
  }

  /** The output samples that the input so far fully determines (possibly none). */
  push(chunk: Int16Array): Int16Array {
    if (this.flushed) throw new Error('StreamResampler: push after flush')
    if (!this.table) return new Int16Array(chunk)
    if (chunk.length === 0) return new Int16Array(0)
    const held = new Int16Array(this.held.length + chunk.length)
    held.set(this.held)
    held.set(chunk, this.held.length)
    this.held = held
    this.received += chunk.length
    const { step, halfWidth } = this
    const last = this.received - 1
    // Outputs whose whole window lies inside the input so far; the final length (unknown yet) cannot be
    // shorter than these, as the kernel's half width is several output steps.
    let end = this.next
    while (Math.floor(end * step + halfWidth) <= last) end++
    const out = this.produce(this.table, end, last)
    // Forget the input before the next output's window.
    const cut = Math.min(this.held.length, Math.ceil(this.next * step - halfWidth) - this.base)
    if (cut > 0) {
      this.held = this.held.slice(cut)
      this.base += cut
    }
    return out
  }

  /** The rest of the output, computed as resample() does at the signal's end. No push after it. */
  flush(): Int16Array {
    if (this.flushed) return new Int16Array(0)
    this.flushed = true
    const n = this.received
    if (!this.table || n === 0) return new Int16Array(0)
    const outLength = Math.max(1, Math.round((n * this.toRate) / this.fromRate))
    return this.produce(this.table, outLength, n - 1)
  }

  /**
   * Output samples up to `end` (exclusive), with `last` the index of the last input sample known. The loop is
   * resample()'s, term for term (held[k - base] is input sample k), so that both round alike.
   */
  private produce(table: Float64Array, end: number, last: number): Int16Array {
    const { step, halfWidth, held, base } = this
    const out = new Int16Array(end - this.next)
    for (let o = 0; this.next < end; this.next++, o++) {
      const pos = this.next * step
      const lo = Math.max(0, Math.ceil(pos - halfWidth))
      const hi = Math.min(last, Math.floor(pos + halfWidth))
      let acc = 0
      let weight = 0
      for (let k = lo; k <= hi; k++) {
        const x = Math.abs(pos - k) * TABLE_STEPS
        const j = Math.floor(x)
        const h = table[j] + (table[j + 1] - table[j]) * (x - j)
        acc += held[k - base] * h
        weight += h
      }
      out[o] = weight > 0 ? clamp16(Math.round(acc / weight)) : held[Math.min(last, Math.round(pos)) - base]
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------------------
// WAV (RIFF/WAVE)

/** PCM16 WAV bytes; for channels > 1 the samples are interleaved. */
export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0)
    throw new RangeError(`encodeWav: invalid sample rate ${sampleRate}`)
  if (!Number.isInteger(channels) || channels < 1 || channels > 16)
    throw new RangeError(`encodeWav: invalid channel count ${channels}`)
  if (samples.length % channels !== 0)
    throw new RangeError(`encodeWav: ${samples.length} samples do not split into ${channels} channels`)
  const dataBytes = samples.length * 2
  const buf = Buffer.alloc(44 + dataBytes)
  buf.write('RIFF', 0, 'ascii')
  buf.writeUInt32LE(36 + dataBytes, 4)
  buf.write('WAVE', 8, 'ascii')
  buf.write('fmt ', 12, 'ascii')
  buf.writeUInt32LE(16, 16)
  buf.writeUInt16LE(1, 20)
  buf.writeUInt16LE(channels, 22)
  buf.writeUInt32LE(sampleRate, 24)
  buf.writeUInt32LE(sampleRate * channels * 2, 28)
  buf.writeUInt16LE(channels * 2, 32)
  buf.writeUInt16LE(16, 34)
  buf.write('data', 36, 'ascii')
  buf.writeUInt32LE(dataBytes, 40)
  for (let i = 0; i < samples.length; i++) buf.writeInt16LE(samples[i], 44 + i * 2)
  return buf
}

const WAVE_PCM = 1
const WAVE_FLOAT = 3
const WAVE_MULAW = 7
const WAVE_EXTENSIBLE = 0xfffe

/**
 * Reads a WAV file into PCM16 mono (channels are averaged). Supports PCM 16-bit, IEEE float 32-bit and
 * μ-law 8-bit, also inside WAVE_FORMAT_EXTENSIBLE; throws an Error naming the problem on anything else.
 */
export function decodeWav(buf: Uint8Array): { samples: Int16Array; sampleRate: number } {
  const len = buf.byteLength
  if (len > MAX_WAV_BYTES) throw new Error(`WAV: ${len} bytes is over the ${MAX_WAV_BYTES / 1024 / 1024} MB limit`)
  const tag = (o: number) => String.fromCharCode(buf[o], buf[o + 1], buf[o + 2], buf[o + 3])
  if (len < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('WAV: not a RIFF/WAVE file')
  const view = new DataView(buf.buffer, buf.byteOffset, len)
  let fmt: { format: number; channels: number; sampleRate: number; bits: number } | null = null
  let data: { start: number; end: number } | null = null
  // The RIFF size field is not trusted (streaming writers leave it 0 or 0xFFFFFFFF): chunks are walked to
  // the end of what arrived.
  for (let o = 12; o + 8 <= len; ) {
    const id = tag(o)
    const size = view.getUint32(o + 4, true)
    const body = o + 8
    if (id === 'fmt ') {
      if (size < 16 || body + size > len) throw new Error('WAV: truncated fmt chunk')
      let format = view.getUint16(body, true)
      if (format === WAVE_EXTENSIBLE) {
        if (size < 40) throw new Error('WAV: truncated WAVE_FORMAT_EXTENSIBLE fmt chunk')
        // The sub-format GUID starts with the plain format code.
        format = view.getUint16(body + 24, true)
      }
      fmt = {
        format,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      }
    } else if (id === 'data' && !data) {
      // A streamed WAV announces more data (often 0xFFFFFFFF) than it holds: take what is there.
      data = { start: body, end: Math.min(len, body + size) }
    }
    // Chunks are padded to an even length; the pad byte is not counted in the size.
    o = body + size + (size & 1)
  }
  if (!fmt) throw new Error('WAV: no fmt chunk')
  if (!data) throw new Error('WAV: no data chunk')
  const { format, channels, sampleRate, bits } = fmt
  if (channels < 1) throw new Error('WAV: zero channels')
  if (sampleRate < 1 || sampleRate > 1_000_000) throw new Error(`WAV: invalid sample rate ${sampleRate}`)
  const read = sampleReader(format, bits, view)
  const bytesPerSample = bits / 8
  const frameBytes = bytesPerSample * channels
  // A trailing partial frame (a cut-off stream) is dropped.
  const frames = Math.floor((data.end - data.start) / frameBytes)
  const samples = new Int16Array(frames)
  for (let f = 0, o = data.start; f < frames; f++) {
    let sum = 0
    for (let c = 0; c < channels; c++, o += bytesPerSample) sum += read(o)
    samples[f] = clamp16(Math.round(sum / channels))
  }
  return { samples, sampleRate }
}

function sampleReader(format: number, bits: number, view: DataView): (offset: number) => number {
  if (format === WAVE_PCM && bits === 16) return (o) => view.getInt16(o, true)
  if (format === WAVE_FLOAT && bits === 32)
    return (o) => {
      const v = view.getFloat32(o, true)
      // NaN and out-of-range floats are clipped rather than wrapped.
      return Number.isNaN(v) ? 0 : Math.max(-1, Math.min(1, v)) * 32767
    }
  if (format === WAVE_MULAW && bits === 8) return (o) => MULAW_TABLE[view.getUint8(o)]
  throw new Error(
    `WAV: unsupported encoding (format ${format}, ${bits}-bit); supported are PCM 16-bit, float 32-bit and μ-law 8-bit`,
  )
}

// ---------------------------------------------------------------------------------------------------------

/** PCM16 samples as base64 of their little-endian bytes (the simulated network's media payload). */
/** PCM16 pieces joined in order. */
export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export const pcmToBase64 = (pcm: Int16Array) =>
  Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64')

/** The inverse of pcmToBase64; an odd trailing byte is dropped. */
export function base64ToPcm(b64: string): Int16Array {
  const buf = Buffer.from(b64, 'base64')
  const out = new Int16Array(buf.length >> 1)
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2)
  return out
}

/** Root mean square of samples[start, end), in PCM16 units (0 for an empty range). */
export function rms(samples: Int16Array, start = 0, end = samples.length): number {
  const a = Math.max(0, Math.floor(start))
  const b = Math.min(samples.length, Math.floor(end))
  if (b <= a) return 0
  let sum = 0
  for (let i = a; i < b; i++) sum += samples[i] * samples[i]
  return Math.sqrt(sum / (b - a))
}

// ---------------------------------------------------------------------------------------------------------
// Tone text: text carried as audio, so the offline speech provider and test fakes can run a whole phone
// conversation ("text in, text out") through the real audio path (μ-law, resampling, silence detection).
// Each character is one symbol: two simultaneous sines, one from each group, like DTMF with 10×10 keys.
// Symbol k (0–94) is the character 32 + k; symbol 95 is the filler that pads the utterance to a spoken
// length and also marks the end of the text. All tones sit well under 3.4 kHz so they survive 8 kHz audio,
// and at least 120 Hz apart, several times the 33 Hz resolution of the decoder's 30 ms window.

/** One symbol's length. */
export const TONE_SYMBOL_MS = 40
/** The low group: a symbol's index divided by 10. */
export const TONE_LOW_HZ: readonly number[] = [400, 520, 640, 760, 880, 1000, 1120, 1240, 1360, 1480]
/** The high group: a symbol's index modulo 10. */
export const TONE_HIGH_HZ: readonly number[] = [1700, 1860, 2020, 2180, 2340, 2500, 2660, 2820, 2980, 3140]
const FILLER = 95
// Per tone; the pair's RMS is then about 9,800, far above any silence threshold, and peaks stay under 2^15.
const TONE_AMPLITUDE = 9800
const FADE_MS = 2
// The decoder analyses each symbol without its first and last 5 ms, so an onset found a few ms off (by
// the fade, the resampler's ringing or a noisy lead-in) never mixes two symbols.
const GUARD_MS = 5
const MIN_SAMPLE_RATE = 8000

/**
 * The characters tone text can carry: accents are dropped (é → e), any whitespace becomes a space and
 * anything else outside printable ASCII (32–126) becomes '?', one per code point.
 */
export function toToneAscii(text: string): string {
  let out = ''
  for (const ch of text.normalize('NFKD')) {
    const c = ch.codePointAt(0)!
    if (c >= 32 && c <= 126) out += ch
    else if (/^\s$/u.test(ch)) out += ' '
    else if (!/^\p{M}$/u.test(ch)) out += '?'
  }
  return out
}

const checkRate = (fn: string, sampleRate: number) => {
  if (!Number.isFinite(sampleRate) || sampleRate < MIN_SAMPLE_RATE)
    throw new RangeError(`${fn}: sample rate ${sampleRate} is under ${MIN_SAMPLE_RATE} Hz`)
}

/**
 * Text as tones: one 40 ms symbol per character, then filler symbols until the utterance lasts as long as
 * speaking it would at `wordsPerMinute` (words are whitespace-separated tokens, at least 1). Empty text is
 * empty audio.
 */
export function encodeToneText(text: string, sampleRate: number, opts: { wordsPerMinute?: number } = {}): Int16Array {
  checkRate('encodeToneText', sampleRate)
  const wpm = opts.wordsPerMinute ?? 150
  if (!Number.isFinite(wpm) || wpm <= 0) throw new RangeError(`encodeToneText: invalid wordsPerMinute ${wpm}`)
  const ascii = toToneAscii(text)
  if (!ascii) return new Int16Array(0)
  const symbolLength = (TONE_SYMBOL_MS / 1000) * sampleRate
  const words = Math.max(1, ascii.split(' ').filter(Boolean).length)
  const length = Math.max(Math.round(ascii.length * symbolLength), Math.round((words / wpm) * 60 * sampleRate))
  const out = new Int16Array(length)
  const fade = Math.max(1, Math.round((FADE_MS / 1000) * sampleRate))
  // Phase runs on across symbols: a jump would click, spreading energy over every tone of both groups.
  let phaseLow = 0
  let phaseHigh = 0
  for (let k = 0, i = 0; i < length; k++) {
    const symbol = k < ascii.length ? ascii.charCodeAt(k) - 32 : FILLER
    const stepLow = (2 * Math.PI * TONE_LOW_HZ[Math.floor(symbol / 10)]) / sampleRate
    const stepHigh = (2 * Math.PI * TONE_HIGH_HZ[symbol % 10]) / sampleRate
    const end = Math.min(length, Math.round((k + 1) * symbolLength))
    for (; i < end; i++) {
      const edge = Math.min(i, length - 1 - i)
      const gain = edge < fade ? 0.5 - 0.5 * Math.cos((Math.PI * edge) / fade) : 1
      out[i] = Math.round(TONE_AMPLITUDE * gain * (Math.sin(phaseLow) + Math.sin(phaseHigh)))
      phaseLow = (phaseLow + stepLow) % (2 * Math.PI)
      phaseHigh = (phaseHigh + stepHigh) % (2 * Math.PI)
    }
  }
  return out
}

/**
 * Reads tone text back: finds the utterance's start by energy, then decodes one symbol per 40 ms until the
 * filler, silence, an unclear symbol or the end of the audio. Null when no symbol is found at all.
 */
export function decodeToneText(samples: Int16Array, sampleRate: number): string | null {
  checkRate('decodeToneText', sampleRate)
  const start = findOnset(samples, sampleRate)
  if (start < 0) return null
  const symbolLength = (TONE_SYMBOL_MS / 1000) * sampleRate
  const guard = Math.round((GUARD_MS / 1000) * sampleRate)
  const minSpan = (symbolLength - 2 * guard) * 0.6
  const detector = new SymbolDetector(sampleRate)
  let text = ''
  let found = 0
  for (let k = 0; ; k++) {
    const a = Math.round(start + k * symbolLength) + guard
    // A last symbol cut short (a trimmed or resampled tail) is still read if most of its span is there.
    const b = Math.min(samples.length, Math.round(start + (k + 1) * symbolLength) - guard)
    if (b - a < minSpan) break
    const symbol = detector.detect(samples, a, b)
    if (symbol === null) break
    found++
    // The filler (and the four unused pairs) end the text.
    if (symbol >= FILLER) break
    text += String.fromCharCode(32 + symbol)
  }
  return found ? text : null
}

/** Silence this long separates two spoken pieces of tone text (a caller pausing mid-sentence). */
const TONE_PAUSE_MS = 100

/**
 * Every piece of tone text in the audio, in order, joined by spaces: an utterance in which the speaker
 * paused is read whole, not only up to its first pause. Null when no piece decodes.
 */
export function decodeToneSpeech(samples: Int16Array, sampleRate: number): string | null {
  checkRate('decodeToneSpeech', sampleRate)
  const frame = Math.round(sampleRate / 100)
  const pause = Math.round(TONE_PAUSE_MS / 10)
  const pieces: string[] = []
  let start = -1
  let quiet = 0
  const decode = (from: number, to: number) => {
    const text = decodeToneText(samples.subarray(from, to), sampleRate)
    if (text) pieces.push(text)
  }
  for (let at = 0; at < samples.length; at += frame) {
    const loud = rms(samples, at, Math.min(samples.length, at + frame)) >= ONSET_MIN_RMS
    if (loud) {
      if (start < 0) start = at
      quiet = 0
    } else if (start >= 0 && ++quiet >= pause) {
      decode(start, at)
      start = -1
      quiet = 0
    }
  }
  if (start >= 0) decode(start, samples.length)
  return pieces.length ? pieces.join(' ') : null
}

// Loud enough to be a tone, not line noise; the relative part keeps a loud noisy lead-in from counting.
const ONSET_MIN_AMPLITUDE = 1500
const ONSET_MIN_RMS = 1000

/** The first sample where sustained tone-level energy starts, or -1. */
function findOnset(samples: Int16Array, sampleRate: number): number {
  const n = samples.length
  let peak = 0
  for (let i = 0; i < n; i++) {
    const v = Math.abs(samples[i])
    if (v > peak) peak = v
  }
  const threshold = Math.max(ONSET_MIN_AMPLITUDE, peak * 0.25)
  if (peak < threshold) return -1
  // A lone spike is not an onset: the next 5 ms must carry energy too.
  const span = Math.round(0.005 * sampleRate)
  for (let i = 0; i < n; i++) {
    if (Math.abs(samples[i]) < threshold) continue
    // The crossing may lag the true start by a fraction of the fade-in; the decoder's guard absorbs that.
    if (rms(samples, i, i + span) >= Math.max(ONSET_MIN_RMS, threshold / 3)) return i
  }
  return -1
}

/** Goertzel over a Hann-windowed span, one bin per group frequency. */
class SymbolDetector {
  private readonly coefLow: number[]
  private readonly coefHigh: number[]
  private windows = new Map<number, Float64Array>()
  constructor(sampleRate: number) {
    const coef = (f: number) => 2 * Math.cos((2 * Math.PI * f) / sampleRate)
    this.coefLow = TONE_LOW_HZ.map(coef)
    this.coefHigh = TONE_HIGH_HZ.map(coef)
  }

  private window(n: number): Float64Array {
    let w = this.windows.get(n)
    if (!w) {
      w = new Float64Array(n)
      for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / n)
      this.windows.set(n, w)
    }
    return w
  }

  /** The symbol index (0–99) in samples[a, b), or null when the span holds no clear tone pair. */
  detect(samples: Int16Array, a: number, b: number): number | null {
    const n = b - a
    if (n < 16 || a < 0) return null
    const w = this.window(n)
    const x = new Float64Array(n)
    let energy = 0
    let wSum = 0
    let w2Sum = 0
    for (let i = 0; i < n; i++) {
      x[i] = samples[a + i] * w[i]
      energy += x[i] * x[i]
      wSum += w[i]
      w2Sum += w[i] * w[i]
    }
    // Mean square of the unwindowed signal, estimated through the window.
    const meanSquare = energy / w2Sum
    if (meanSquare < ONSET_MIN_RMS * ONSET_MIN_RMS * 0.25) return null
    const low = this.strongest(x, this.coefLow, wSum)
    const high = this.strongest(x, this.coefHigh, wSum)
    if (!low || !high) return null
    // The two tones must carry most of the energy: speech or noise spreads it elsewhere.
    const toneSquare = (low.amplitude ** 2 + high.amplitude ** 2) / 2
    if (toneSquare < meanSquare * 0.5) return null
    return low.index * 10 + high.index
  }

  /** The dominant bin of a group, if it clearly beats the runner-up (2× the amplitude). */
  private strongest(x: Float64Array, coefs: number[], wSum: number): { index: number; amplitude: number } | null {
    let best = -1
    let bestPower = 0
    let secondPower = 0
    for (let j = 0; j < coefs.length; j++) {
      const c = coefs[j]
      let s1 = 0
      let s2 = 0
      for (let i = 0; i < x.length; i++) {
        const s0 = x[i] + c * s1 - s2
        s2 = s1
        s1 = s0
      }
      const power = s1 * s1 + s2 * s2 - c * s1 * s2
      if (power > bestPower) {
        secondPower = bestPower
        bestPower = power
        best = j
      } else if (power > secondPower) secondPower = power
    }
    if (best < 0 || bestPower < secondPower * 4) return null
    // |X| ≈ A·Σw/2 for a sine of amplitude A under the window.
    return { index: best, amplitude: (2 * Math.sqrt(bestPower)) / wSum }
  }
}
