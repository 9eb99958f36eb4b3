// decisions "Redaction" (behaviour): every read of transcript, summary or identity masks PII by the redact
// query where the route takes one (only GET /conversations/{conv}), else by the account's default_redaction:
// the list with include, GET …/summary (also for a summaries:read key) and the webhook payloads. Two accounts
// on the shared server: a tenant with default_redaction, and a partner member of it without (so the tenant's
// key lists both in one page), each with an imported call (conversation.ended) and a live API chat
// (summary.ready) that state the same e-mail address and phone number.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, uniqueEmail, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver, type Received } from '../helpers/receiver'
import { html, serveSite, type TestSite } from '../helpers/site'
import { ALL_PERSONAL_SCOPES, createTenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
const EMAIL = 'jane.doe@example.com'
const EMAIL_MASKED = '******************om'
const PHONE = '+14155550101'
const PHONE_MASKED = '**********01'
const SAID = `Write to ${EMAIL} please.`
const SAID_MASKED = `Write to ${EMAIL_MASKED} please.`

interface Account {
  accountId: string
  userId: string
  api: Api
}
interface Side {
  t: Account
  summariesOnly: Api
  agentId: string
  imported: string
  live: string
  path: string
}
let site: TestSite
let rx: Receiver
const sides = {} as Record<'masked' | 'plain', Side>

/** A partner member's account with a key of its own user. */
async function memberOf(partner: Account): Promise<Account> {
  const m = await partner.api.post('/partners/members', { email: uniqueEmail('member') })
  expect(m.status, m.text).toBe(201)
  const key = await master.post(`/users/${m.body.user_id}/credentials`, {
    name: 'member',
    scopes: ALL_PERSONAL_SCOPES.filter((s) => s !== 'partners:manage'),
  })
  expect(key.status, key.text).toBe(201)
  return { accountId: m.body.account_id, userId: m.body.user_id, api: createApi(base, key.body.secret) }
}

async function prepare(name: 'masked' | 'plain'): Promise<Side> {
  const t = name === 'masked' ? await createTenant(master) : await memberOf(sides.masked.t)
  if (name === 'masked')
    expect((await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: true })).status).toBe(200)
  const key = await master.post(`/users/${t.userId}/credentials`, { name: 'summaries', scopes: ['summaries:read'] })
  const agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  const path = `/${name}`
  const hook = await t.api.post('/webhooks/endpoints', {
    url: rx.url(path),
    events: ['conversation.ended', 'summary.ready'],
  })
  expect(hook.status, hook.text).toBe(201)
  const imported = await t.api.post('/conversations/import', {
    agent_id: agentId,
    started_at: new Date(Date.now() - 3600_000).toISOString(),
    direction: 'inbound',
    identity: { email: EMAIL, phone_e164: PHONE },
    summary: { text: `Asked for a quote. ${SAID}`, outcome: 'lead_captured', lead: { name: 'Jane', email: EMAIL } },
    transcript: [{ speaker: 'visitor', text: SAID, timestamp: new Date(Date.now() - 3500_000).toISOString() }],
  })
  expect(imported.status, imported.text).toBe(201)
  const live = await t.api.post('/conversations', { agent_id: agentId, identity: { email: EMAIL } })
  expect(live.status, live.text).toBe(201)
  const conv = live.body.conversation_id
  expect((await t.api.post(`/conversations/${conv}/messages`, { text: SAID })).status).toBe(200)
  expect((await t.api.post(`/conversations/${conv}/end`)).status).toBe(200)
  return {
    t,
    summariesOnly: createApi(base, key.body.secret),
    agentId,
    imported: imported.body.conversation_id,
    live: conv,
    path,
  }
}

beforeAll(async () => {
  rx = await startReceiver()
  site = await serveSite({
    '/': { body: html('Quill Plumbing', '<h1>Quill Plumbing</h1><p>Emergency plumbing in Denver, 24/7.</p>') },
  })
  sides.masked = await prepare('masked')
  sides.plain = await prepare('plain')
  // The live chats' summaries are written by the job.
  for (const s of Object.values(sides))
    await until(`summary of ${s.live}`, async () => {
      const r = await s.t.api.get(`/conversations/${s.live}/summary`)
      return r.body.summary_status === 'ready'
    })
}, 180_000)
afterAll(async () => {
  await rx?.close()
  await site?.close()
})

const itemOf = (r: { body: any }, id: string) => (r.body.data as any[]).find((c) => c.conversation_id === id)

/** The PII of the imported call as one read shows it: masked or as stored. */
function expectImported(item: any, masked: boolean) {
  if ('identity' in item) {
    expect(item.identity.email).toBe(masked ? EMAIL_MASKED : EMAIL)
    expect(item.identity.phone_e164).toBe(masked ? PHONE_MASKED : PHONE)
  }
  if ('summary' in item) {
    expect(item.summary.text).toBe(`Asked for a quote. ${masked ? SAID_MASKED : SAID}`)
    expect(item.summary.lead).toMatchObject({ name: 'Jane', email: masked ? EMAIL_MASKED : EMAIL })
  }
}

describe('redaction on every read', () => {
  it('the list with include masks summary and identity by the account default; another account reads them as stored', async () => {
    verifies('behaviour.redaction')
    for (const [name, s] of Object.entries(sides)) {
      for (const qs of ['include=summary,identity', '', 'include=identity', 'include=summary']) {
        const r = await s.t.api.get(`/conversations${qs ? `?${qs}` : ''}`)
        expect(r.status, r.text).toBe(200)
        const item = itemOf(r, s.imported)
        expect(item, `${name} ${qs}`).toBeTruthy()
        expectImported(item, name === 'masked')
        expect(JSON.stringify(r.body).includes(EMAIL), `${name} ${qs}`).toBe(name === 'plain')
      }
      // Metrics carry no PII, and the rows keep every other field as PostgreSQL built them.
      const m = await s.t.api.get('/conversations?include=metrics')
      expect(itemOf(m, s.imported)).toMatchObject({ conversation_id: s.imported, status: 'completed' })
      expect(itemOf(m, s.imported)).not.toHaveProperty('identity')
    }
  })

  it('one page over two accounts masks each row by its own account', async () => {
    verifies('behaviour.redaction')
    const { masked, plain } = sides
    const r = await masked.t.api.get(
      `/conversations?account_id=${masked.t.accountId}&account_id=${plain.t.accountId}&include=summary,identity`,
    )
    expect(r.status, r.text).toBe(200)
    expectImported(itemOf(r, masked.imported), true)
    expectImported(itemOf(r, plain.imported), false)
  })

  it('a summaries:read key: the list with include=summary and GET …/summary are masked by the account default', async () => {
    verifies('behaviour.redaction')
    for (const [name, s] of Object.entries(sides)) {
      const masked = name === 'masked'
      const l = await s.summariesOnly.get('/conversations?include=summary')
      expect(l.status, l.text).toBe(200)
      expectImported(itemOf(l, s.imported), masked)
      const one = await s.summariesOnly.get(`/conversations/${s.imported}/summary`)
      expect(one.status, one.text).toBe(200)
      expect(one.body).toMatchObject({ conversation_id: s.imported, summary_status: 'ready' })
      expectImported({ summary: one.body.summary }, masked)
      // The live chat's summary (written by the job) names the identity's e-mail as the lead.
      const live = await s.t.api.get(`/conversations/${s.live}/summary`)
      expect(live.body.summary.lead.email).toBe(masked ? EMAIL_MASKED : EMAIL)
    }
  })

  it('redact is a query of the detail only: there it overrides the default either way; the list and summary refuse it', async () => {
    verifies('behaviour.redaction')
    const { masked, plain } = sides
    const d = await masked.t.api.get(`/conversations/${masked.imported}`)
    expect(d.body).toMatchObject({ redacted: true, redaction_rules_applied: ['email', 'phone'] })
    expectImported(d.body, true)
    expect(d.body.transcript[0].text).toBe(SAID_MASKED)
    const open = await masked.t.api.get(`/conversations/${masked.imported}?redact=false`)
    expect(open.body.redacted).toBe(false)
    expectImported(open.body, false)
    expect(open.body.transcript[0].text).toBe(SAID)
    expectImported((await plain.t.api.get(`/conversations/${plain.imported}`)).body, false)
    expectImported((await plain.t.api.get(`/conversations/${plain.imported}?redact=true`)).body, true)
    // Where the route takes no redact, a client cannot lift the account's default with one.
    for (const path of ['/conversations?redact=false', `/conversations/${masked.imported}/summary?redact=false`]) {
      const r = await masked.t.api.get(path)
      expect(r.status, path).toBe(400)
      expect(err(r)).toMatchObject({ code: 'unsupported_filter', field: 'redact' })
    }
  })

  it('webhook payloads carry the conversation as its GET shows it: masked for the account with default_redaction', async () => {
    verifies('behaviour.redaction')
    for (const [name, s] of Object.entries(sides)) {
      const masked = name === 'masked'
      const mine = (r: Received[]) => r.filter((x) => x.path === s.path)
      const got = await rx.waitFor(
        (r) =>
          mine(r).some((x) => x.json?.type === 'summary.ready' && x.json.data.conversation_id === s.live) &&
          mine(r).some((x) => x.json?.type === 'conversation.ended' && x.json.data.conversation_id === s.imported),
        `${name}: conversation.ended of the import and summary.ready of the chat`,
      )
      const ended = mine(got).find(
        (x) => x.json.type === 'conversation.ended' && x.json.data.conversation_id === s.imported,
      )!
      expect(ended.json.data.redacted).toBe(masked)
      expectImported(ended.json.data, masked)
      expect(ended.json.data.transcript[0].text).toBe(masked ? SAID_MASKED : SAID)
      const ready = mine(got).find((x) => x.json.type === 'summary.ready' && x.json.data.conversation_id === s.live)!
      expect(ready.json.data.summary.lead.email).toBe(masked ? EMAIL_MASKED : EMAIL)
      expect(ready.json.data.identity.email).toBe(masked ? EMAIL_MASKED : EMAIL)
      for (const x of mine(got)) expect(x.body.includes(EMAIL), `${name} ${x.json.type}`).toBe(!masked)
    }
  })
})
