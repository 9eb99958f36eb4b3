// Boot: configuration, plugin registries and providers (a bad setting, a plugin that fails its boot checks,
// a duplicate name or an unknown provider stops the process with one line), then the database, migrations
// and the job queue behind one memoized promise that middleware 01 awaits (pitfall 2). Without SVC_PLUGINS
// all of the first part is synchronous and the process stops before it listens; plugin packages are
// imported asynchronously, so with them it stops before serving any request.
import { defineNitroPlugin } from 'nitropack/runtime'
import migrations from '#svc/migrations'
import pgliteSnapshot, { queues as pgliteSnapshotQueues } from '#svc/pglite-snapshot'
import jobs from '#svc/jobs'
import capabilities, { files as capabilityFiles } from '#svc/capabilities'
import chatEngines, { files as chatFiles } from '#svc/providers/chat'
import voiceProviders, { files as voiceFiles } from '#svc/providers/voice'
import telephonyProviders, { files as telephonyFiles } from '#svc/providers/telephony'
import speechProviders, { files as speechFiles } from '#svc/providers/speech'
import mailers, { files as mailFiles } from '#svc/providers/mail'
import blobProviders, { files as blobFiles } from '#svc/providers/blob'
import { loadConfig, type Config } from '~/config'
import { traceRequests } from '~/http/trace-requests'
import { loadPluginPackages, type LoadedPlugin } from '~/kit/plugin-packages'
import { ProviderConfigError } from '~/kit/providers'
import { PluginError } from '~/kit/registry'
import { setBoot, type Runtime } from '~/kit/runtime'
import { buildRuntime, prepareRuntime, stopRuntime, type Installed } from '~/runtime'

/** A refusal whose cause is the configuration or a plugin, not the host: one line, no stack. */
const isOneLine = (err: unknown) => err instanceof ProviderConfigError || err instanceof PluginError

function fatal(err: unknown): never {
  if (!isOneLine(err)) throw err
  console.error(`[boot] fatal: ${(err as Error).message}`)
  process.exit(1)
}

export default defineNitroPlugin((nitroApp) => {
  const installed: Installed = {
    migrations,
    pgliteSnapshot,
    pgliteSnapshotQueues,
    jobs,
    capabilities,
    chat: chatEngines,
    voice: voiceProviders,
    telephony: telephonyProviders,
    speech: speechProviders,
    mail: mailers,
    blob: blobProviders,
    files: {
      capabilities: capabilityFiles,
      chat: chatFiles,
      voice: voiceFiles,
      telephony: telephonyFiles,
      speech: speechFiles,
      mail: mailFiles,
      blob: blobFiles,
    },
  }
  const config: Config = loadConfig()
  const prepare = (packages: LoadedPlugin[]) => {
    try {
      // A capability's intents are checked as the registry takes it (kit checks.ts): a bad pattern is a
      // one-line boot error naming its file or package.
      return prepareRuntime(installed, config, packages)
    } catch (err) {
      return fatal(err)
    }
  }
  // decisions "Tracing": with tracing off the handler is left as it is.
  if (config.tracing) traceRequests(nitroApp.h3App)
  let runtime: Runtime | undefined
  const prepared = config.plugins.length
    ? loadPluginPackages(config.plugins).then(prepare)
    : Promise.resolve(prepare([]))
  const ready = prepared.then((p) => buildRuntime(p, installed)).then((r) => (runtime = r))
  setBoot(ready)
  ready.catch((err) => {
    if (isOneLine(err)) console.error(`[boot] fatal: ${err.message}`)
    else console.error('[boot] fatal:', err instanceof Error ? err.stack : err)
    process.exit(1)
  })

  nitroApp.hooks.hook('close', () => stopRuntime(runtime))
})
