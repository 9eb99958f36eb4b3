// A voice provider lists its voices for GET /voices and names its realtime model. The contract is the public
// kit's (@svc/plugin-kit).
export { type Voice, type VoiceProvider, defineVoiceProvider } from '@svc/plugin-kit'
