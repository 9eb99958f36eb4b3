// @svc/plugin-kit: everything a plugin imports. Nothing here imports the host; the host imports this.
export * from './capability.ts'
export * from './chat-engine.ts'
export * from './intents.ts'
export * from './mailer.ts'
export * from './plugin.ts'
export * from './speech.ts'
export * from './telephony.ts'
export * from './voice.ts'
