// The chat turn writes in one statement (issue 14): a turn that fails after its claim leaves nothing
// half-written. The failure is real: the openai engine talks to a fake /chat/completions server of this
// file, which answers one turn with a token count PostgreSQL's integer columns cannot hold, so the write
// itself is refused by the database after the claim, the quota and the engine have run.
// Own server on the embedded database: on PostgreSQL every test server shares one job queue, and this
// file's engine would then answer other files' summary jobs.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import type { Api } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

let fake: Server
let nextUsage = 7
let nextContent = 'We open at 9am.'
let seeded: SeededServer<Tenant>
let api: Api

beforeAll(async () => {
  fake = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const completion = {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'fake-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: nextContent }, finish_reason: 'stop' }],
        usage: { prompt_tokens: nextUsage, completion_tokens: 3, total_tokens: nextUsage + 3 },
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion))
    })
  })
  await new Promise<void>((ok) => fake.listen(0, '127.0.0.1', ok))
  const env = {
    DATABASE_URL: undefined as unknown as string,
    SVC_CHAT_ENGINE: 'openai',
    OPENAI_BASE_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1`,
    OPENAI_API_KEY: 'sk-test-fake',
  }
  seeded = await startSeededServer({
    env,
    prepare: (master) => createTenant(master),
    agents: (tenant) => [{ accountId: tenant.accountId }],
  })
  api = seeded.as(seeded.prepared.key)
}, 180_000)

afterAll(async () => {
  await seeded?.server.stop('SIGKILL')
  await new Promise((ok) => fake?.close(ok))
})

describe('a chat turn that fails after its claim', () => {
  it('writes no turn, no usage, gives the quota unit back and leaves the conversation free', async () => {
    verifies('chat.turn-atomic')
    const acc = seeded.prepared.accountId
    const conv = await api.post('/conversations', { agent_id: seeded.agentIds[0] })
    expect(conv.status, conv.text).toBe(201)
    const id = conv.body.conversation_id
    const ok = await api.post(`/conversations/${id}/messages`, { text: 'When do you open?' })
    expect(ok.status, ok.text).toBe(200)

    const snapshot = async () => {
      const c = await api.get(`/conversations/${id}?include=transcript`)
      const limits = await api.get(`/accounts/${acc}/limits`)
      const day = 86_400_000
      const window = `from=${new Date(Date.now() - day).toISOString()}&to=${new Date(Date.now() + day).toISOString()}`
      const usage = await api.get(`/accounts/${acc}/usage?${window}`)
      expect(usage.status, usage.text).toBe(200)
      return {
        turnCount: c.body.turn_count,
        transcript: c.body.transcript,
        chatMessages: limits.body.quotas.chat_messages.used,
        usage: { data: usage.body.data, totals: usage.body.totals },
      }
    }
    const before = await snapshot()
    expect(before.turnCount).toBe(before.transcript.length)

    nextUsage = 3_000_000_000 // over int4: the database refuses the turn's write
    const failed = await api.post(`/conversations/${id}/messages`, { text: 'And on Sundays?' })
    expect(failed.status, failed.text).toBe(500)
    expect(failed.body.error.code).toBe('internal_error')
    const after = await snapshot()
    expect(after).toEqual(before)

    nextUsage = 7
    const again = await api.post(`/conversations/${id}/messages`, { text: 'And on Sundays?' })
    expect(again.status, again.text).toBe(200)
    expect(again.body.turns.map((t: { turn_index: number }) => t.turn_index)).toEqual([
      before.turnCount,
      before.turnCount + 1,
    ])
    const final = await snapshot()
    expect(final.turnCount).toBe(before.turnCount + 2)
    expect(final.chatMessages).toBe(before.chatMessages + 1)
  })

  it('stores an engine answer that holds U+0000 without it, instead of failing the turn', async () => {
    verifies('security.hostile-input.nul')
    const conv = await api.post('/conversations', { agent_id: seeded.agentIds[0] })
    expect(conv.status, conv.text).toBe(201)
    nextContent = 'We open\u0000 at 9am.'
    try {
      const r = await api.post(`/conversations/${conv.body.conversation_id}/messages`, { text: 'When?' })
      expect(r.status, r.text).toBe(200)
      expect(r.body.turn.text).toBe('We open at 9am.')
      const read = await api.get(`/conversations/${conv.body.conversation_id}?include=transcript`)
      expect(read.body.transcript.at(-1).text).toBe('We open at 9am.')
    } finally {
      nextContent = 'We open at 9am.'
    }
  })
})
