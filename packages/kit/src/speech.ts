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

/** What a live transcription tells the host, in the order it learns it. */
export type TranscriptEvent =
  /** The words heard so far in the current segment; may still change. */
  | { type: 'interim'; text: string }
  /**
   * A segment whose words will not change. `endOfUtterance`: the provider's own endpointing says the speaker
   * stopped after it (Deepgram's speech_final); the host may then end the turn before its own silence timer.
   */
  | { type: 'final'; text: string; confidence: number | null; endOfUtterance: boolean }
  /** The provider saw a gap after the last final word (Deepgram's UtteranceEnd). */
  | { type: 'utterance_end' }
  /** The session failed; no more events follow. */
  | { type: 'error'; message: string }

export interface ListenOptions {
  /** The rate of the PCM16 the host sends. */
  sampleRate: number
  language?: string | null
  /** The host's end-of-speech silence (the agent's end_of_speech_ms): a provider may endpoint on it. */
  endOfSpeechMs: number
  onEvent(event: TranscriptEvent): void
}

/** One call's live transcription: the caller's audio goes in as it arrives, events come out. */
export interface LiveTranscription {
  /** Caller audio, in order, at ListenOptions.sampleRate. */
  send(pcm: Int16Array): void
  /**
   * The host decided the utterance ended: the provider turns what it holds into `final` events now. Resolves
   * once they have been delivered (or after the provider's own bound); never rejects.
   */
  finalize(): Promise<void>
  /** Ends the session; no events after it. */
  close(): void
}

export interface SpeechProvider {
  name: string
  /**
   * Speech to text for one utterance (already segmented by the host on silence). Optional: a synthesis-only
   * provider omits it and serves SVC_TTS only (the boot refuses it as SVC_STT).
   */
  transcribe?(audio: Pcm, opts?: TranscribeOptions): Promise<Transcript>
  /** Text to speech: the whole utterance at opts.sampleRate. */
  synthesize(text: string, opts: SynthesisOptions): Promise<Pcm>
  /**
   * Text to speech as it arrives (optional): PCM16 chunks at opts.sampleRate, in order, concatenated the
   * same audio synthesize() would answer. Honours opts.signal. Without it the host plays synthesize()'s
   * answer whole (synthesisStream()).
   */
  synthesizeStream?(text: string, opts: SynthesisOptions): AsyncIterable<Int16Array>
  /**
   * Live transcription of a call (optional). Without it the host segments the caller's audio itself and
   * sends each utterance to transcribe().
   */
  listen?(opts: ListenOptions): LiveTranscription
}

/** A provider that transcribes: what SVC_STT needs. */
export type TranscribingProvider = SpeechProvider & Required<Pick<SpeechProvider, 'transcribe'>>

/** A provider given transcribe is typed a TranscribingProvider; one without it synthesizes only. */
export function defineSpeechProvider(p: TranscribingProvider): TranscribingProvider
export function defineSpeechProvider(p: SpeechProvider): SpeechProvider
export function defineSpeechProvider(p: SpeechProvider): SpeechProvider {
  return p
}

/** The provider's streaming synthesis, or its whole answer as one chunk. */
export async function* synthesisStream(
  provider: SpeechProvider,
  text: string,
  opts: SynthesisOptions,
): AsyncGenerator<Int16Array> {
  if (provider.synthesizeStream) {
    yield* provider.synthesizeStream(text, opts)
    return
  }
  const pcm = await provider.synthesize(text, opts)
  opts.signal?.throwIfAborted()
  if (pcm.samples.length) yield pcm.samples
}
