// Seeds agents straight into the database, the way the build will create them (createAgentRecord then
// applyBuildOutputs). On PGlite the server must be stopped first; the build tests can replace this with
// POST /accounts/{acc}/agents/build once it exists.
import { withDatabase } from './db'
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
export async function seedAgents(dataDir: string, specs: SeedSpec[]): Promise<string[]> {
  return withDatabase(dataDir, async (db) => {
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
  })
}

/** Stops the server, seeds the agents, restarts it on the same data dir and master key. */
export async function seedAgent(
  server: TestServer,
  specs: SeedSpec[],
  env?: Record<string, string>,
): Promise<{ server: TestServer; ids: string[] }> {
  await server.stop('SIGTERM')
  const ids = await seedAgents(server.dataDir, specs)
  const next = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
  return { server: next, ids }
}
