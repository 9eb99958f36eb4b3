// Boot: plugin registries (synchronously, so a duplicate name stops the process), then the database,
// migrations and the job queue behind one memoized promise that middleware 01 awaits (pitfall 2).
import { defineNitroPlugin } from 'nitropack/runtime'
import migrations from '#svc/migrations'
import jobs from '#svc/jobs'
import capabilities from '#svc/capabilities'
import chatEngines from '#svc/providers/chat'
import voiceProviders from '#svc/providers/voice'
import telephonyProviders from '#svc/providers/telephony'
import mailers from '#svc/providers/mail'
import { loadConfig } from '~/config'
import { configureQuotas } from '~/domain/limits/quotas'
import { openDatabase } from '~/db/client'
import { migrate } from '~/db/migrate'
import { startQueue } from '~/jobs/_queue'
import { createRegistries } from '~/kit/registries'
import { createRateLimiter } from '~/kit/rate-limit'
import { setBoot, type Runtime } from '~/kit/runtime'
import { createAuditWriter } from '~/domain/audit/writer'
import { personalKeyResolver, requireActiveTenant } from '~/domain/credentials/keys'
import { oauthAccessTokenResolver } from '~/domain/oauth/tokens'
import { createFsBlobStore } from '~/kit/blob-store'
import { startWebhookPump } from '~/domain/webhooks/pump'

export default defineNitroPlugin((nitroApp) => {
  const config = loadConfig()
  configureQuotas(config.quotas)
  const registries = createRegistries()
  registries.capabilities.registerAll(capabilities)
  registries.chat.registerAll(chatEngines)
  registries.voice.registerAll(voiceProviders)
  registries.telephony.registerAll(telephonyProviders)
  registries.mail.registerAll(mailers)

  let runtime: Runtime | undefined
  const boot = async (): Promise<Runtime> => {
    if (config.masterKeyFile)
      console.log(
        `[boot] master key: ${config.masterKeyFile} (generated for development; set SVC_MASTER_KEY in production)`,
      )
    const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
    const applied = await migrate(database, migrations)
    if (applied.length) console.log(`[boot] applied migrations: ${applied.join(', ')}`)
    const blobs = createFsBlobStore(config.blobDir)
    const queue = await startQueue({
      database,
      databaseUrl: config.databaseUrl,
      jobs,
      pollSeconds: config.jobPollSeconds,
      registries,
      config,
      blobs,
    })
    let redis: unknown
    if (config.redisUrl) {
      const { default: Redis } = await import('ioredis')
      redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
    }
    runtime = {
      config,
      database,
      queue,
      registries,
      rateLimiter: createRateLimiter({ redis, prefix: 'rl' }),
      authFailureLimiter: createRateLimiter({ redis, prefix: 'rl-auth' }),
      credentialResolvers: [
        personalKeyResolver(database),
        requireActiveTenant(database, oauthAccessTokenResolver(database)),
      ],
      audit: createAuditWriter(database),
      blobs,
      webhooks: startWebhookPump({ database, config, intervalMs: config.jobPollSeconds * 1000 }),
      startedAt: new Date(),
    }
    console.log(
      `[boot] ready on ${database.kind === 'pglite' ? `embedded PGlite (${config.dataDir})` : 'PostgreSQL'}: ${config.publicUrl}/v1`,
    )
    return runtime
  }
  const ready = boot()
  setBoot(ready)
  ready.catch((err) => {
    console.error('[boot] fatal:', err instanceof Error ? err.stack : err)
    process.exit(1)
  })

  nitroApp.hooks.hook('close', async () => {
    await runtime?.webhooks.stop().catch(() => {})
    await runtime?.audit.stop().catch(() => {})
    await runtime?.queue.stop().catch(() => {})
    await runtime?.database.close().catch(() => {})
  })
})
