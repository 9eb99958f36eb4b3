// SVC_MAIL=smtp on a server of its own, delivering to a real SMTP receiver (smtp-server) started here:
// the lead an API chat captures arrives at the receiver, with the URL's credentials, and GET /mail/outbox
// records it (provider smtp, status sent). With the receiver gone, the tool fails (ok false, no record)
// and the outbox row says failed with the error. The same server also checks operator quota defaults
// (SVC_QUOTAS) and the chat rate class (SVC_RATE_LIMITS chat=4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { seedAgent } from '../helpers/agents'
import { startServer, type TestServer } from '../helpers/server'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

let smtp: SmtpReceiver
let server: TestServer
let t: Tenant
let api: Api
let agentId: string

beforeAll(async () => {
  smtp = await startSmtpReceiver({ user: 'relay@example.com', pass: 'p@ss word' })
  const env = {
    SVC_MAIL: 'smtp',
    SMTP_URL: smtp.url,
    SMTP_FROM: 'Quokka Bot <bot@example.com>',
    SVC_QUOTAS: 'chat_messages=7, kb_documents=9',
    SVC_RATE_LIMITS: 'read=100000,write=100000,chat=4',
  }
  server = await startServer({ env })
  t = await createTenant(createApi(server.base, server.masterKey))
  const seeded = await seedAgent(server, [{ accountId: t.accountId }], env)
  server = seeded.server
  agentId = seeded.ids[0]
  api = createApi(server.base, t.key)
  const p = await api.patch(`/agents/${agentId}`, {
    capabilities: ['capture_lead'],
    capability_settings: { lead_emails: ['sales@example.com', 'owner@example.com'] },
  })
  expect(p.status).toBe(200)
}, 90_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
  await smtp?.close()
})

async function leadTurn() {
  const c = await api.post('/conversations', { agent_id: agentId })
  expect(c.status).toBe(201)
  const r = await api.post(`/conversations/${c.body.conversation_id}/messages`, {
    text: "Please call me back, I'm Ada, ada@example.com",
  })
  expect(r.status).toBe(200)
  return {
    id: c.body.conversation_id as string,
    tool: r.body.turns.find((x: { turn_type: string }) => x.turn_type === 'tool'),
  }
}

describe('operator quota defaults (SVC_QUOTAS)', () => {
  it('replace the default daily quotas of every account', async () => {
    verifies('conversations.billing')
    const r = await api.get(`/accounts/${t.accountId}/limits`)
    expect(r.status).toBe(200)
    expect(r.body.quotas).toMatchObject({
      chat_messages: { limit: 7 },
      kb_documents: { limit: 9 },
      builds: { limit: 50 },
    })
  })
})

describe('SMTP mailer (SVC_MAIL=smtp)', () => {
  it('delivers the lead e-mail to the SMTP server and records it in the outbox', async () => {
    verifies('conversations.tools', 'mail.outbox')
    const { id, tool } = await leadTurn()
    expect(tool).toMatchObject({ tool: { name: 'capture_lead', result: { ok: true, outcome: 'lead_captured' } } })
    const out = (await api.get('/mail/outbox')).body.data.find(
      (m: { tags: Record<string, string> }) => m.tags.conversation_id === id,
    )
    expect(out).toMatchObject({
      provider: 'smtp',
      status: 'sent',
      error: null,
      to: ['sales@example.com', 'owner@example.com'],
      subject: 'New lead: Ada',
    })
    const got = smtp.received.find((m) => m.header('X-Svc-Message-Id') === out.message_id)
    expect(got).toBeDefined()
    expect(got).toMatchObject({
      from: 'bot@example.com',
      to: ['sales@example.com', 'owner@example.com'],
      user: 'relay@example.com',
      subject: 'New lead: Ada',
    })
    expect(got!.raw).toContain('ada@example.com')
  }, 60_000)

  it('an unreachable SMTP server fails the tool and the outbox row says failed', async () => {
    verifies('conversations.tools')
    await smtp.close()
    const { id, tool } = await leadTurn()
    expect(tool.tool.result).toMatchObject({ ok: false, record: null, outcome: null })
    expect(tool.tool.result.message).toMatch(/could not be sent/)
    const out = (await api.get('/mail/outbox')).body.data.find(
      (m: { tags: Record<string, string> }) => m.tags.conversation_id === id,
    )
    expect(out).toMatchObject({ provider: 'smtp', status: 'failed', subject: 'New lead: Ada' })
    expect(out.error).toMatch(/ECONNREFUSED|connect/i)
  }, 60_000)

  // Last: it spends the rest of the chat class (4 a minute on this server; the tests above sent 2).
  it('POST …/messages is metered in the chat rate class: 429 rate_limited with Retry-After', async () => {
    verifies('conversations.messages')
    const c = await api.post('/conversations', { agent_id: agentId })
    let limited: Awaited<ReturnType<Api['post']>> | undefined
    for (let i = 0; i < 8 && !limited; i++) {
      const r = await api.post(`/conversations/${c.body.conversation_id}/messages`, { text: 'When do you open?' })
      if (r.status === 429) limited = r
      else expect(r.status).toBe(200)
    }
    expect(limited).toBeDefined()
    expect(err(limited!).code).toBe('rate_limited')
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited!.headers.get('ratelimit-policy')).toMatch(/^"chat";q=4;/)
  }, 60_000)
})
