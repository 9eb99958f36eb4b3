// A plugin package default-exports one definePlugin({...}) value: a name and any capabilities and
// providers. The host (SVC_PLUGINS) registers each of them as it registers the files of its own folders,
// with the same checks; providers are then chosen by the usual settings (SVC_SPEECH=<name>...).
import type { BlobProvider } from './blob.ts'
import type { Capability } from './capability.ts'
import type { ChatEngine } from './chat-engine.ts'
import type { Mailer } from './mailer.ts'
import type { SpeechProvider } from './speech.ts'
import type { TelephonyProvider } from './telephony.ts'
import type { VoiceProvider } from './voice.ts'

export interface PluginProviders {
  chat?: readonly ChatEngine[]
  speech?: readonly SpeechProvider[]
  telephony?: readonly TelephonyProvider[]
  mail?: readonly Mailer[]
  voice?: readonly VoiceProvider[]
  blob?: readonly BlobProvider[]
}

export interface PluginDefinition {
  /** Unique among the plugins a host loads; boot errors name it. */
  name: string
  // biome-ignore lint/suspicious/noExplicitAny: each capability keeps its own parameter schema.
  capabilities?: readonly Capability<any>[]
  providers?: PluginProviders
}

/**
 * The brand the host looks for. A registered symbol, not a class or a module-local symbol: the plugin's
 * copy of the kit (its node_modules) is not the host's copy, and both must agree on what a plugin is.
 */
export const PLUGIN_BRAND: unique symbol = Symbol.for('@svc/plugin-kit/plugin') as never

export interface Plugin extends PluginDefinition {
  readonly [PLUGIN_BRAND]: 1
}

/** The kinds a plugin may provide, in the order the host registers them. */
export const PROVIDER_KINDS = ['chat', 'speech', 'telephony', 'mail', 'voice', 'blob'] as const
export type ProviderKind = (typeof PROVIDER_KINDS)[number]

export const definePlugin = (p: PluginDefinition): Plugin => Object.freeze({ ...p, [PLUGIN_BRAND]: 1 as const })

/** Whether `value` was made by definePlugin (from any copy of the kit). */
export const isPlugin = (value: unknown): value is Plugin =>
  typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_BRAND] === 1
