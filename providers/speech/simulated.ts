// Offline "text in, text out" speech: synthesize encodes the text as tone symbols (server/lib/audio.ts)
// and transcribe decodes them, so a whole phone conversation runs through the real audio path (μ-law,
// resampling, silence segmentation) with no network and deterministic transcripts. Utterances last as long
// as the text would take to say at 150 words per minute (scaled by speakingRate), so timing-dependent
// behaviour (barge-in, turn length, call duration) sees realistic durations.
import { decodeToneSpeech, encodeToneText } from '~/lib/audio'
import { defineSpeechProvider } from '~/kit/speech'

// Same ceiling as the openai provider, so a text too long for a real engine fails offline too.
const MAX_TEXT_CHARS = 4096
const WORDS_PER_MINUTE = 150

export default defineSpeechProvider({
  name: 'simulated',
  async transcribe(audio, opts) {
    opts?.signal?.throwIfAborted()
    const text = decodeToneSpeech(audio.samples, audio.sampleRate) ?? ''
    // The codec either reads a symbol exactly or stops, so a transcript is certain; nothing heard is 0.
    return { text, confidence: text ? 1 : 0 }
  },
  async synthesize(text, opts) {
    opts.signal?.throwIfAborted()
    if (text.length > MAX_TEXT_CHARS)
      throw new Error(`[speech] [simulated] text of ${text.length} characters is over the ${MAX_TEXT_CHARS} limit`)
    // Nothing to say is no audio (as a real engine gives no speech for it), not a burst of filler tone.
    if (!text.trim()) return { samples: new Int16Array(0), sampleRate: opts.sampleRate }
    const rate = Math.min(2, Math.max(0.5, opts.speakingRate || 1))
    return {
      samples: encodeToneText(text, opts.sampleRate, { wordsPerMinute: WORDS_PER_MINUTE * rate }),
      sampleRate: opts.sampleRate,
    }
  },
})
