// Everything a plugin package holds, checked: the plugin itself as the host's loader takes it, every
// capability, speech and blob provider through its contract, and the other providers (chat, telephony, mail,
// voice) through the host's boot checks, whose behaviour needs the host's own fakes (the host runs them in
// its test suite).
import { checkChatEngine, checkMailer, checkTelephony, checkVoiceProvider } from '../checks.ts'
import { isPlugin, PROVIDER_KINDS, type Plugin } from '../plugin.ts'
import type { BlobProvider } from '../blob.ts'
import type { SpeechProvider } from '../speech.ts'
import { type BlobCheckOptions, blobChecks } from './blob.ts'
import { capabilityChecks } from './capability.ts'
import { type Check, check, ensure, show } from './checks.ts'
import { type SpeechCheckOptions, speechChecks } from './speech.ts'

export interface PluginCheckOptions {
  /** How each speech provider is checked: one set of options, or one per provider. Default 'full'. */
  speech?: SpeechCheckOptions | ((provider: SpeechProvider) => SpeechCheckOptions)
  /** How each blob provider is opened for its checks; without a context only its shape is checked. */
  blob?: BlobCheckOptions | ((provider: BlobProvider) => BlobCheckOptions)
}

const SHAPES = {
  chat: checkChatEngine,
  telephony: checkTelephony,
  mail: checkMailer,
  voice: checkVoiceProvider,
} as const

export function pluginChecks(plugin: Plugin, opts: PluginCheckOptions = {}): Check[] {
  const name = `plugin ${typeof plugin?.name === 'string' ? plugin.name : show(plugin?.name)}`
  const checks: Check[] = [
    check(`${name}: is a definePlugin value with a name, capabilities and known provider kinds`, () => {
      ensure(isPlugin(plugin), 'the default export must be definePlugin({...}) from @svc/plugin-kit')
      ensure(
        /^[a-z0-9@][a-z0-9@/._-]{0,127}$/.test(plugin.name),
        `name ${show(plugin.name)} is not a package-like name`,
      )
      ensure(plugin.capabilities === undefined || Array.isArray(plugin.capabilities), 'capabilities must be an array')
      for (const [kind, list] of Object.entries(plugin.providers ?? {})) {
        ensure((PROVIDER_KINDS as readonly string[]).includes(kind), `providers.${kind} is no provider kind`)
        ensure(list === undefined || Array.isArray(list), `providers.${kind} must be an array`)
      }
      const names = (plugin.capabilities ?? []).map((c) => c.name)
      ensure(new Set(names).size === names.length, `two capabilities share a name: ${names.join(', ')}`)
    }),
  ]
  for (const c of plugin.capabilities ?? []) checks.push(...capabilityChecks(c))
  for (const p of plugin.providers?.speech ?? [])
    checks.push(...speechChecks(p, typeof opts.speech === 'function' ? opts.speech(p) : opts.speech))
  for (const p of plugin.providers?.blob ?? [])
    checks.push(...blobChecks(p, typeof opts.blob === 'function' ? opts.blob(p) : opts.blob))
  for (const [kind, shape] of Object.entries(SHAPES)) {
    const list = (plugin.providers?.[kind as keyof typeof SHAPES] ?? []) as readonly { name?: unknown }[]
    for (const p of list)
      checks.push(
        check(`${kind} provider ${show(p?.name)}: passes the host's boot checks`, () => {
          ensure(typeof p?.name === 'string' && p.name.length > 0, 'it has no name')
          const problem = (shape as (x: unknown) => string | null)(p)
          ensure(problem === null, `the host would refuse it at boot: ${problem}`)
        }),
      )
  }
  return checks
}
