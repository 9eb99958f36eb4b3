declare module '#svc/migrations' {
  const m: { name: string; sql: string }[]
  export default m
}
declare module '#svc/jobs' {
  const m: import('./kit/job').JobDefinition[]
  export default m
}
declare module '#svc/capabilities' {
  const m: import('./kit/capability').Capability[]
  export default m
  export const files: string[]
}
declare module '#svc/providers/chat' {
  const m: import('./kit/chat-engine').ChatEngine[]
  export default m
  export const files: string[]
}
declare module '#svc/providers/voice' {
  const m: import('./kit/voice').VoiceProvider[]
  export default m
  export const files: string[]
}
declare module '#svc/providers/telephony' {
  const m: import('./kit/telephony').Telephony[]
  export default m
  export const files: string[]
}
declare module '#svc/providers/speech' {
  const m: import('./kit/speech').SpeechProvider[]
  export default m
  export const files: string[]
}
declare module '#svc/providers/mail' {
  const m: import('./kit/mailer').Mailer[]
  export default m
  export const files: string[]
}
declare module '#svc/extract-worker' {
  const url: string
  export default url
}
declare module '#svc/regex-worker' {
  const url: string
  export default url
}
declare module '#svc/mp3-worker' {
  const url: string
  export default url
}
declare module '#svc/pglite-snapshot' {
  /** The URL of a PGlite cluster with the migrations applied, in the build: scripts/pglite-snapshot.mjs. */
  const url: string
  export default url
  /** The queue schema the snapshot holds and its queues (jobs/_queue-options.ts `queueManifest`). */
  export const queues: { schema: string; manifest: string }
}
declare module '#svc/widget-script' {
  /** The built widget (scripts/build-widget.mjs): minified IIFE, its sizes and its version hash. */
  const w: { code: string; bytes: number; gzipBytes: number; hash: string }
  export default w
}
declare module '#svc/providers/blob' {
  const m: import('./kit/blob-store').BlobProvider[]
  export default m
  export const files: string[]
}
