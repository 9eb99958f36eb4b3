// @svc/plugin-kit: everything a plugin imports. Nothing here imports the host; the host imports this.
// The contract suites are the `./testing` entry (src/testing), so a plugin's runtime never loads them.
export * from './blob.ts'
export * from './capability.ts'
export * from './chat-engine.ts'
export * from './checks.ts'
export * from './intent-checks.ts'
export * from './intents.ts'
export * from './mailer.ts'
export * from './plugin.ts'
export * from './speech.ts'
export * from './telephony.ts'
export * from './voice.ts'
