// A speech provider turns a caller's utterance into text and the agent's text into audio. One file per
// provider under providers/speech/, chosen by SVC_SPEECH. The contract is the public kit's
// (@svc/plugin-kit); the host adds synthesisStream.
import type { SpeechProvider, SynthesisOptions } from '@svc/plugin-kit'

export {
  type Pcm,
  type Transcript,
  type SynthesisOptions,
  type TranscribeOptions,
  type TranscriptEvent,
  type ListenOptions,
  type LiveTranscription,
  type SpeechProvider,
  defineSpeechProvider,
} from '@svc/plugin-kit'

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
