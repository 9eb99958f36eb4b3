// The host's side of capability intents (kit/intents.ts). What makes them usable is the public kit's check
// (packages/kit/src/intent-checks.ts), which the registry runs on every capability as it registers it, so a
// bad pattern stops the boot with one line naming the file or SVC_PLUGINS package it came from.
export {
  compileIntentPattern,
  INTENT_FILLS,
  INTENT_PROGRAM_MAX,
  INTENT_PROGRAM_TOTAL_MAX,
  INTENT_TEXT_MAX,
  intentProblems,
  parameterNames,
} from '@svc/plugin-kit'
