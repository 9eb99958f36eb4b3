// The intent types are the public kit's (packages/kit/src/intents.ts): re-exported for `~/kit/intents`.
export type { CapabilityIntent, IntentFill } from '@svc/plugin-kit'
