// acme: an offline speech provider. Text becomes tone symbols (two sines per character, like DTMF with 10×10
// keys) and transcription reads them back, so a simulated phone call runs through the host's real audio
// path (μ-law, resampling, silence segmentation) with no network. Self-contained on purpose: a plugin package
// cannot import the host. Its symbol order is its own (character k is symbol 7k+3 mod 95), so audio from
// the host's `simulated` provider does not read as text here, nor the reverse: a correct transcript proves
// this provider did both sides.
import { defineSpeechProvider } from '@svc/plugin-kit'

const SYMBOL_MS = 40
const LOW_HZ = [400, 520, 640, 760, 880, 1000, 1120, 1240, 1360, 1480]
const HIGH_HZ = [1700, 1860, 2020, 2180, 2340, 2500, 2660, 2820, 2980, 3140]
const CHARS = 95
const FILLER = 95
const AMPLITUDE = 9800
const FADE_MS = 2
const GUARD_MS = 5
const PAUSE_MS = 100
const MIN_RMS = 1000
const MIN_AMPLITUDE = 1500
const WORDS_PER_MINUTE = 150
const MAX_TEXT_CHARS = 4096

const toSymbol = (k) => (k * 7 + 3) % CHARS
const fromSymbol = new Map(Array.from({ length: CHARS }, (_, k) => [toSymbol(k), k]))

/** Printable ASCII: accents dropped, whitespace a space, anything else '?'. */
function toAscii(text) {
  let out = ''
  for (const ch of text.normalize('NFKD')) {
    const c = ch.codePointAt(0)
    if (c >= 32 && c <= 126) out += ch
    else if (/^\s$/u.test(ch)) out += ' '
    else if (!/^\p{M}$/u.test(ch)) out += '?'
  }
  return out
}

/** @param {string} text @param {number} sampleRate @param {number} wpm */
function encode(text, sampleRate, wpm) {
  const ascii = toAscii(text)
  if (!ascii) return new Int16Array(0)
  const symbolLength = (SYMBOL_MS / 1000) * sampleRate
  const words = Math.max(1, ascii.split(' ').filter(Boolean).length)
  const length = Math.max(Math.round(ascii.length * symbolLength), Math.round((words / wpm) * 60 * sampleRate))
  const out = new Int16Array(length)
  const fade = Math.max(1, Math.round((FADE_MS / 1000) * sampleRate))
  let phaseLow = 0
  let phaseHigh = 0
  for (let k = 0, i = 0; i < length; k++) {
    const symbol = k < ascii.length ? toSymbol(ascii.charCodeAt(k) - 32) : FILLER
    const stepLow = (2 * Math.PI * LOW_HZ[Math.floor(symbol / 10)]) / sampleRate
    const stepHigh = (2 * Math.PI * HIGH_HZ[symbol % 10]) / sampleRate
    const end = Math.min(length, Math.round((k + 1) * symbolLength))
    for (; i < end; i++) {
      const edge = Math.min(i, length - 1 - i)
      const gain = edge < fade ? 0.5 - 0.5 * Math.cos((Math.PI * edge) / fade) : 1
      out[i] = Math.round(AMPLITUDE * gain * (Math.sin(phaseLow) + Math.sin(phaseHigh)))
      phaseLow = (phaseLow + stepLow) % (2 * Math.PI)
      phaseHigh = (phaseHigh + stepHigh) % (2 * Math.PI)
    }
  }
  return out
}

function rms(samples, start, end) {
  if (end <= start) return 0
  let sum = 0
  for (let i = start; i < end; i++) sum += samples[i] * samples[i]
  return Math.sqrt(sum / (end - start))
}

function onset(samples, sampleRate) {
  let peak = 0
  for (const s of samples) peak = Math.max(peak, Math.abs(s))
  const threshold = Math.max(MIN_AMPLITUDE, peak * 0.25)
  if (peak < threshold) return -1
  const span = Math.round(0.005 * sampleRate)
  for (let i = 0; i < samples.length; i++)
    if (
      Math.abs(samples[i]) >= threshold &&
      rms(samples, i, Math.min(samples.length, i + span)) >= Math.max(MIN_RMS, threshold / 3)
    )
      return i
  return -1
}

/** Goertzel over a Hann window: the clearly strongest bin of a group, or null. */
function strongest(x, freqs, sampleRate, wSum) {
  let best = -1
  let bestPower = 0
  let secondPower = 0
  freqs.forEach((f, j) => {
    const c = 2 * Math.cos((2 * Math.PI * f) / sampleRate)
    let s1 = 0
    let s2 = 0
    for (const xi of x) {
      const s0 = xi + c * s1 - s2
      s2 = s1
      s1 = s0
    }
    const power = s1 * s1 + s2 * s2 - c * s1 * s2
    if (power > bestPower) {
      secondPower = bestPower
      bestPower = power
      best = j
    } else if (power > secondPower) secondPower = power
  })
  if (best < 0 || bestPower < secondPower * 4) return null
  return { index: best, amplitude: (2 * Math.sqrt(bestPower)) / wSum }
}

function detect(samples, a, b, sampleRate) {
  const n = b - a
  if (n < 16 || a < 0) return null
  const x = new Float64Array(n)
  let energy = 0
  let wSum = 0
  let w2Sum = 0
  for (let i = 0; i < n; i++) {
    const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / n)
    x[i] = samples[a + i] * w
    energy += x[i] * x[i]
    wSum += w
    w2Sum += w * w
  }
  const meanSquare = energy / w2Sum
  if (meanSquare < MIN_RMS * MIN_RMS * 0.25) return null
  const low = strongest(x, LOW_HZ, sampleRate, wSum)
  const high = strongest(x, HIGH_HZ, sampleRate, wSum)
  if (!low || !high) return null
  if ((low.amplitude ** 2 + high.amplitude ** 2) / 2 < meanSquare * 0.5) return null
  return low.index * 10 + high.index
}

/** One piece of tone text, from its onset to the filler or silence; null when nothing reads. */
function decodePiece(samples, sampleRate) {
  const start = onset(samples, sampleRate)
  if (start < 0) return null
  const symbolLength = (SYMBOL_MS / 1000) * sampleRate
  const guard = Math.round((GUARD_MS / 1000) * sampleRate)
  const minSpan = (symbolLength - 2 * guard) * 0.6
  let text = ''
  let found = 0
  for (let k = 0; ; k++) {
    const a = Math.round(start + k * symbolLength) + guard
    const b = Math.min(samples.length, Math.round(start + (k + 1) * symbolLength) - guard)
    if (b - a < minSpan) break
    const symbol = detect(samples, a, b, sampleRate)
    if (symbol === null) break
    found++
    const k0 = fromSymbol.get(symbol)
    if (k0 === undefined) break
    text += String.fromCharCode(32 + k0)
  }
  return found ? text : null
}

/** Every piece of tone text in the audio (a caller may pause mid-sentence), joined by spaces. */
function decode(samples, sampleRate) {
  const frame = Math.round(sampleRate / 100)
  const pause = Math.round(PAUSE_MS / 10)
  const pieces = []
  let start = -1
  let quiet = 0
  const take = (from, to) => {
    const text = decodePiece(samples.subarray(from, to), sampleRate)
    if (text) pieces.push(text)
  }
  for (let at = 0; at < samples.length; at += frame) {
    if (rms(samples, at, Math.min(samples.length, at + frame)) >= MIN_RMS) {
      if (start < 0) start = at
      quiet = 0
    } else if (start >= 0 && ++quiet >= pause) {
      take(start, at)
      start = -1
      quiet = 0
    }
  }
  if (start >= 0) take(start, samples.length)
  return pieces.join(' ')
}

const checkRate = (rate) => {
  if (!Number.isFinite(rate) || rate < 8000)
    throw new RangeError(`[speech] [acme] sample rate ${rate} is under 8000 Hz`)
}

export default defineSpeechProvider({
  name: 'acme',
  async transcribe(audio, opts) {
    opts?.signal?.throwIfAborted()
    checkRate(audio.sampleRate)
    const text = decode(audio.samples, audio.sampleRate)
    return { text, confidence: text ? 1 : 0 }
  },
  async synthesize(text, opts) {
    opts.signal?.throwIfAborted()
    checkRate(opts.sampleRate)
    if (text.length > MAX_TEXT_CHARS)
      throw new Error(`[speech] [acme] text of ${text.length} characters is over the ${MAX_TEXT_CHARS} limit`)
    const rate = Math.min(2, Math.max(0.5, opts.speakingRate || 1))
    return { samples: encode(text, opts.sampleRate, WORDS_PER_MINUTE * rate), sampleRate: opts.sampleRate }
  },
})
