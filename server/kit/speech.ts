// A speech provider turns a caller's utterance into text and the agent's text into audio. One file per
// provider under providers/speech/, chosen by SVC_SPEECH. Audio is always PCM16 mono (little-endian
// samples in an Int16Array) with its sample rate; providers convert to and from their own formats.

export interface Pcm {
  samples: Int16Array
  sampleRate: number
}

export interface Transcript {
  text: string
  /** 0–1 when the provider reports one, else null. */
  confidence: number | null
}

export interface SynthesisOptions {
  /** A voice id from GET /voices, or null for the provider's default. */
  voice: string | null
  /** 0.5–2, 1 is normal. */
  speakingRate: number
  /** The sample rate the caller's leg wants; the provider resamples to it. */
  sampleRate: number
  language?: string | null
  signal?: AbortSignal
}

export interface TranscribeOptions {
  language?: string | null
  signal?: AbortSignal
}

export interface SpeechProvider {
  name: string
  /** Speech to text for one utterance (already segmented by the host on silence). */
  transcribe(audio: Pcm, opts?: TranscribeOptions): Promise<Transcript>
  /** Text to speech: the whole utterance at opts.sampleRate. */
  synthesize(text: string, opts: SynthesisOptions): Promise<Pcm>
}

export const defineSpeechProvider = (p: SpeechProvider): SpeechProvider => p
