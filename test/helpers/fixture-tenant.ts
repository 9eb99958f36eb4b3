// A tenant holding one real resource of every kind the API's path parameters name, for tests driven by
// the OpenAPI document (the fuzz reaches each route's body parser; the OWASP BOLA check tries another
// tenant's real ids). `ids` maps a path parameter name ({agt}, {conv}, …) to the id of this tenant.
import { expect } from 'vitest'
import { createApi, type Api } from './api'
import { buildAgent } from './build'
import { freshNumber } from './phone'
import { html, serveSite, type TestSite } from './site'
import { ALL_PERSONAL_SCOPES, createTenant, type Tenant } from './tenant'
import { sleep } from './wait'
import { openWidget } from './widget'

export interface FixtureTenant {
  t: Tenant
  /** Path parameter name → a real id of this tenant. */
  ids: Record<string, string>
  /** A dashboard session token of the tenant's user (Authorization: Session …). */
  session: string
  /** The agent's widget token and an Origin its allowed_domains admit. */
  widget: { token: string; origin: string }
  site: TestSite
  /** Every resource of the tenant that a request could change, as one comparable value (volatile fields
   *  such as last_used_at and meta.request_id left out). */
  snapshot(): Promise<unknown>
  close(): Promise<void>
}

// Fields that move without a write of the tenant's: request ids, last use of a key, the operator view's
// log of the latest failed requests, default windows (from/to = the last 30 days).
const VOLATILE = new Set([
  'request_id',
  'last_used_at',
  'last_used_ip',
  'next_attempt_at',
  'recent_errors',
  'from',
  'to',
])

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !VOLATILE.has(k))
      .map(([k, v]) => [k, stable(v)]),
  )
}

const ok = (r: { status: number; text: string }, what: string) => {
  if (r.status >= 300) throw new Error(`fixture ${what}: ${r.status} ${r.text.slice(0, 300)}`)
}

/** Builds the tenant and its resources; about 5–10 s (one agent build from a local site). */
export async function createFixtureTenant(master: Api, label: string): Promise<FixtureTenant> {
  const site = await serveSite({
    '/': { body: html(`${label} Bikes`, `<h1>${label} Bikes</h1><p>${label} Bikes repairs bicycles in Perth.</p>`) },
    '/hook': { body: '{}', type: 'application/json' },
  })
  const t = await createTenant(master)
  const api = t.api
  const agt = await buildAgent(api, t.accountId, `${site.origin}/`, { language: 'en' })
  const ids: Record<string, string> = { acc: t.accountId, usr: t.userId, key: t.keyId, agt }

  const doc = await api.post(`/agents/${agt}/kb/documents`, { title: 'Prices', text: 'A puncture repair costs $12.' })
  ok(doc, 'kb document')
  ids.doc = doc.body.doc_id
  const pv = await api.post(`/agents/${agt}/prompts`, { type: 'chat', body: 'Be brief.', label: 'fixture' })
  ok(pv, 'prompt')
  const versions = await api.get(`/agents/${agt}/prompts`)
  ids.pv = versions.body.data.find((x: { label: string }) => x.label === 'fixture')?.id
  const conv = await api.post('/conversations', { agent_id: agt })
  ok(conv, 'conversation')
  ids.conv = conv.body.conversation_id
  const dnc = await api.post('/dnc', { phone: freshNumber() })
  ok(dnc, 'dnc')
  ids.dnc = dnc.body.dnc_id
  const lst = await api.post(`/agents/${agt}/lists`, { name: 'Fixture list' })
  ok(lst, 'list')
  ids.lst = lst.body.list_id
  ok(await api.post(`/lists/${ids.lst}/import`, { contacts: [{ phone: freshNumber() }] }), 'list import')
  const prf = await api.post(`/agents/${agt}/profiles`, { name: 'Fixture', role: 'You remind customers.' })
  ok(prf, 'profile')
  ids.prf = prf.body.profile_id
  // A schedule window closed today: the dialler places no call for this campaign.
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
  const cmp = await api.post('/campaigns', {
    agent_id: agt,
    profile_id: ids.prf,
    list_id: ids.lst,
    name: 'Fixture campaign',
    schedule: { timezone: 'UTC', days: [days[(new Date().getUTCDay() + 9) % 7]], start: '09:00', end: '17:00' },
  })
  ok(cmp, 'campaign')
  ids.cmp = cmp.body.campaign_id
  // A call the simulated network fails at once (a number ending 0000), so nothing keeps running.
  const call = await api.post('/calls', {
    agent_id: agt,
    profile_id: ids.prf,
    to: freshNumber((n) => n.endsWith('0000')),
  })
  ok(call, 'call')
  ids.call = call.body.call_id
  // An agent test and a run of it (issue 31's {tst} and {run}).
  const tst = await api.post(`/agents/${agt}/tests`, {
    name: 'Fixture test',
    surface: 'chat',
    turns: [{ user: 'Hello', expect: [{ type: 'not_contains', value: 'zzz' }] }],
  })
  ok(tst, 'agent test')
  ids.tst = tst.body.test_id
  const run = await api.post(`/agents/${agt}/test-runs`, { test_ids: [ids.tst] })
  ok(run, 'test run')
  ids.run = run.body.run_id
  // A knowledge sync of the built site ({sync}, issue 32), finished before any snapshot is taken.
  const sync = await api.post(`/agents/${agt}/kb/sync`)
  ok(sync, 'kb sync')
  ids.sync = sync.body.sync_id
  for (let i = 0; i < 300; i++) {
    if ((await api.get(`/agents/${agt}/kb/syncs/${ids.sync}`)).body.status !== 'running') break
    await sleep(100)
  }
  const num = await api.post('/phone-numbers', { e164: freshNumber(), agent_id: agt })
  ok(num, 'phone number')
  ids.num = num.body.number_id ?? num.body.phone_number_id ?? num.body.id
  const whk = await api.post('/webhooks/endpoints', {
    url: `${site.origin}/hook`,
    events: ['conversation.ended'],
  })
  ok(whk, 'webhook endpoint')
  ids.whk = whk.body.endpoint_id
  ok(await api.post(`/webhooks/endpoints/${ids.whk}/test`), 'webhook test')
  for (let i = 0; i < 50 && !ids.dlv; i++) {
    const d = await api.get(`/webhooks/deliveries?endpoint_id=${ids.whk}`)
    ids.dlv = d.body.data?.[0]?.delivery_id
    if (!ids.dlv) await sleep(100)
  }
  // A session of the tenant's user, and a dashboard key of its own ({id} of /api/api-keys).
  const origin = master.base.replace(/\/v1$/, '')
  const dash = createApi(origin)
  const sess = await dash.post('/api/auth/login', { email: t.email, password: t.password })
  ok(sess, 'dashboard login')
  const session = sess.body.session_token ?? sess.body.token
  expect(session, sess.text).toBeTypeOf('string')
  const dashKey = await dash.post(
    '/api/api-keys',
    { name: 'fixture', scopes: ['agents:read'] },
    { headers: { authorization: `Session ${session}` } },
  )
  ok(dashKey, 'dashboard key')
  ids.id = dashKey.body.key_id
  // The widget: admitted for one host name, so the widget routes reach their own parse step.
  const widget = {
    token: await openWidget(api, agt, { allowed_domains: ['fixture.example'] }),
    origin: 'https://fixture.example',
  }

  const reads = (): [Api, string][] => {
    const m = (p: string): [Api, string] => [master, p]
    const a = (p: string): [Api, string] => [api, p]
    return [
      a(`/accounts/${t.accountId}`),
      a(`/accounts/${t.accountId}/limits`),
      a(`/agents/${agt}`),
      a(`/agents/${agt}/widget`),
      a(`/agents/${agt}/voice`),
      a(`/agents/${agt}/kb/summary`),
      a(`/agents/${agt}/kb/documents?limit=100`),
      a(`/agents/${agt}/prompts`),
      a(`/agents/${agt}/lists?limit=100`),
      a(`/agents/${agt}/profiles?limit=100`),
      a(`/agent-versions?limit=100`),
      a(`/lists/${ids.lst}/items?limit=100`),
      a(`/campaigns?limit=100`),
      a(`/dnc?limit=100`),
      a(`/phone-numbers?limit=100`),
      a(`/webhooks/endpoints?limit=100`),
      a(`/conversations?limit=100`),
      a(`/conversations/${ids.conv}?include=transcript`),
      a(`/calls?limit=100`),
      a(`/credentials?user_id=${t.userId}&limit=100`),
      a(`/partners/members?limit=100`),
      m(`/users/${t.userId}`),
      m(`/admin/customers/${t.userId}`),
      m(`/admin/customers/${t.userId}/wallet?limit=100`),
    ]
  }
  return {
    t,
    ids,
    session,
    widget,
    site,
    async snapshot() {
      const out: Record<string, unknown> = {}
      for (const [client, path] of reads()) {
        const r = await client.get(path)
        out[path] = { status: r.status, body: stable(r.body) }
      }
      return out
    },
    close: () => site.close(),
  }
}

/**
 * Whether an OpenAPI operation is the master key's alone: the Operator surface, or a route none of whose
 * scopes a personal key can hold (the description lists them: "Scope: `users:manage` or `credentials:manage`").
 */
export function masterOnly(op: any): boolean {
  if (op.tags?.includes('Operator')) return true
  if (!op['x-scope']) return false
  const listed = /Scope: ((?:`[^`]+`(?: or )?)+)/.exec(op.description ?? '')?.[1] ?? `\`${op['x-scope']}\``
  const scopes = [...listed.matchAll(/`([^`]+)`/g)].map((m) => m[1])
  return !scopes.some((s) => ALL_PERSONAL_SCOPES.includes(s))
}
