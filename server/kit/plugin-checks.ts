// The boot's shape checks are the public kit's (packages/kit/src/checks.ts), so the host and a plugin
// author's contract suite (@svc/plugin-kit/testing) check the same thing.
export {
  checkBlobProvider,
  checkCapability,
  checkChatEngine,
  checkMailer,
  checkSpeechProvider,
  checkTelephony,
  checkVoiceProvider,
} from '@svc/plugin-kit'
