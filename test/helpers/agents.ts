// Seeds agents straight into the database, the way the build will create them (createAgentRecord then
// applyBuildOutputs). On PGlite the server must be stopped first; the build tests can replace this with
// POST /accounts/{acc}/agents/build once it exists.
import { withDatabase } from './db'
import { createApi, type Api } from './api'
import type { TestServer } from './server'
import { startServer } from './server'
import { applyBuildOutputs, createAgentRecord } from '~/domain/agents/create'

export interface SeedSpec {
  accountId: string
  name?: string
  agentType?: string
  websiteUrl?: string
  voiceId?: string
  language?: string
}

/** Creates and builds one agent per spec in one transaction each; answers their ids in order. */
export async function seedAgents(dataDir: string, specs: SeedSpec[], on?: { url: string | null }): Promise<string[]> {
  return withDatabase(
    dataDir,
    async (db) => {
      const ids: string[] = []
      for (const [i, s] of specs.entries()) {
        ids.push(
          await db.tx(async (tx) => {
            const row = await createAgentRecord(tx, {
              accountId: s.accountId,
              name: s.name ?? `Agent ${i + 1}`,
              agentType: s.agentType ?? 'chat',
              websiteUrl: s.websiteUrl ?? 'https://example.com',
              voiceId: s.voiceId ?? 'alloy',
              language: s.language ?? 'en',
            })
            await applyBuildOutputs(tx, row.id, {
              businessName: 'Example Co',
              businessProfile: 'Sells examples.',
              role: 'You answer questions about Example Co.',
              greetingInitial: 'Hello! How can I help?',
              instructions: 'Phone prompt v1',
              chatInstructions: 'Chat prompt v1',
              voiceChatInstructions: 'Voice chat prompt v1',
              conversationStyle: 'friendly',
              buildNumber: 1,
            })
            return row.id
          }),
        )
      }
      return ids
    },
    on,
  )
}

/** Stops the server, seeds the agents, restarts it on the same data dir and master key. */
export async function seedAgent(
  server: TestServer,
  specs: SeedSpec[],
  env?: Record<string, string>,
): Promise<{ server: TestServer; ids: string[] }> {
  await server.stop('SIGTERM')
  // A server started with its own DATABASE_URL (or none: its PGlite) is seeded there, not in the run's database.
  const on = env && 'DATABASE_URL' in env ? { url: env.DATABASE_URL ?? null } : undefined
  const ids = await seedAgents(server.dataDir, specs, on)
  const next = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
  return { server: next, ids }
}

export interface SeededServer<T> {
  server: TestServer
  /** The master key on the restarted server. */
  master: Api
  /** What `prepare` answered, made before the restart (tenants, extra keys). */
  prepared: T
  /** The seeded agents' ids, in the order of the specs. */
  agentIds: string[]
  /** A client of the restarted server with this secret (clients made before the restart point at the old port). */
  as(secret: string): Api
}

/**
 * A server of the test file's own with tenants and agents: starts it, lets `prepare` create tenants and
 * keys over HTTP, stops it to write the agents `agents(prepared)` lists into its database, and starts it
 * again on the same data directory and master key.
 */
export async function startSeededServer<T>(opts: {
  env?: Record<string, string>
  prepare: (master: Api) => Promise<T>
  agents: (prepared: T) => SeedSpec[]
}): Promise<SeededServer<T>> {
  const first = await startServer({ env: opts.env })
  const prepared = await opts.prepare(createApi(first.base, first.masterKey))
  const { server, ids } = await seedAgent(first, opts.agents(prepared), opts.env)
  return {
    server,
    master: createApi(server.base, server.masterKey),
    prepared,
    agentIds: ids,
    as: (secret) => createApi(server.base, secret),
  }
}
