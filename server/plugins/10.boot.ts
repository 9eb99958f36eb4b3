// Boot: configuration, plugin registries and providers synchronously (a bad setting, a duplicate name or an
// unknown provider stops the process before it listens), then the database, migrations and the job queue
// behind one memoized promise that middleware 01 awaits (pitfall 2).
import { defineNitroPlugin } from 'nitropack/runtime'
import migrations from '#svc/migrations'
import jobs from '#svc/jobs'
import capabilities from '#svc/capabilities'
import chatEngines from '#svc/providers/chat'
import voiceProviders from '#svc/providers/voice'
import telephonyProviders from '#svc/providers/telephony'
import speechProviders from '#svc/providers/speech'
import mailers from '#svc/providers/mail'
import { traceRequests } from '~/http/trace-requests'
import { checkCapabilityIntents } from '~/domain/plugins/intents'
import { ProviderConfigError } from '~/kit/providers'
import { setBoot, type Runtime } from '~/kit/runtime'
import { buildRuntime, prepareRuntime, stopRuntime, type Installed, type Prepared } from '~/runtime'

export default defineNitroPlugin((nitroApp) => {
  const installed: Installed = {
    migrations,
    jobs,
    capabilities,
    chat: chatEngines,
    voice: voiceProviders,
    telephony: telephonyProviders,
    speech: speechProviders,
    mail: mailers,
  }
  let prepared: Prepared
  try {
    prepared = prepareRuntime(installed)
    // A capability's intents are checked as it is registered: a bad pattern is a one-line boot error.
    checkCapabilityIntents(prepared.registries.capabilities.list())
  } catch (err) {
    if (!(err instanceof ProviderConfigError)) throw err
    console.error(`[boot] fatal: ${err.message}`)
    process.exit(1)
  }
  // decisions "Tracing": with tracing off the handler is left as it is.
  if (prepared.config.tracing) traceRequests(nitroApp.h3App)
  let runtime: Runtime | undefined
  const ready = buildRuntime(prepared, installed).then((r) => (runtime = r))
  setBoot(ready)
  ready.catch((err) => {
    console.error('[boot] fatal:', err instanceof Error ? err.stack : err)
    process.exit(1)
  })

  nitroApp.hooks.hook('close', () => stopRuntime(runtime))
})
