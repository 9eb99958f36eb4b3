// A speech provider turns a caller's utterance into text and the agent's text into audio. One file per
// provider under providers/speech/, chosen by SVC_SPEECH (or SVC_STT and SVC_TTS). The contract is the
// public kit's (@svc/plugin-kit), synthesisStream included (the contract suites use it too).
export {
  type Pcm,
  type Transcript,
  type SynthesisOptions,
  type TranscribeOptions,
  type TranscriptEvent,
  type ListenOptions,
  type LiveTranscription,
  type SpeechProvider,
  type TranscribingProvider,
  defineSpeechProvider,
  synthesisStream,
} from '@svc/plugin-kit'
