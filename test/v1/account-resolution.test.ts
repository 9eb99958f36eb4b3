// Account resolution on every account-scoped route, outbound included (decisions "Behaviour", row Account
// resolution), on the shared server. A key the master key issued with a second account, and a partner key,
// reach the other account's calls, profiles, lists, do-not-call entries, campaigns and phone numbers through
// each form the contract names: account_id in the query, account_id in a POST body (JSON or a multipart
// part), and X-Svc-Account; with none of them the request acts for the home account, where those resources
// are 404. An account not on the credential is 403 forbidden_account (field account_id) in every form.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError, uniqueEmail, type Api, type ApiResponse } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { freshNumber } from '../helpers/phone'
import { html, serveSite } from '../helpers/site'
import { ALL_PERSONAL_SCOPES, createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))

type Form = 'query' | 'body' | 'header'
const FORMS: Form[] = ['query', 'body', 'header']
/** A weekday three days from today (UTC), so a started campaign never dials during the test. */
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
const CLOSED = () => ({ timezone: 'UTC', days: [DAYS[(new Date().getUTCDay() + 9) % 7]], start: '09:00', end: '17:00' })
/** A number the simulated network never answers, so a placed call ends by itself without a conversation. */
const silentNumber = () => freshNumber((n) => n.endsWith('0000'))

/**
 * A request naming `account` in one form. GET, PATCH and DELETE have no body form: there the body form
 * falls back to the query (the contract reads account_id from a POST body only).
 */
function named(api: Api, form: Form, account: string) {
  const withQuery = (path: string) => `${path}${path.includes('?') ? '&' : '?'}account_id=${account}`
  const headers: Record<string, string> = form === 'header' ? { 'x-svc-account': account } : {}
  return {
    get: (path: string) => api.get(form === 'header' ? path : withQuery(path), { headers }),
    delete: (path: string) => api.delete(form === 'header' ? path : withQuery(path), { headers }),
    patch: (path: string, body: Record<string, unknown>) =>
      api.patch(form === 'header' ? path : withQuery(path), body, { headers }),
    post: (path: string, body: Record<string, unknown> = {}) =>
      form === 'body'
        ? api.post(path, { ...body, account_id: account })
        : api.post(form === 'query' ? withQuery(path) : path, body, { headers }),
  }
}

const ok = (r: ApiResponse, status = 200) => {
  expect(r.status, r.text).toBe(status)
  return r.body
}

describe('account resolution on outbound routes', () => {
  let home: Tenant // the key's own account
  let second: Tenant // the account the key also covers
  let stranger: Tenant // an account the key does not cover
  let multi: Api
  let agent: string // an agent of the second account

  beforeAll(async () => {
    const site = await serveSite({
      '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
    })
    ;[home, second, stranger] = await Promise.all([createTenant(master), createTenant(master), createTenant(master)])
    const key = await master.post(`/users/${home.userId}/credentials`, {
      name: 'two accounts',
      scopes: ALL_PERSONAL_SCOPES.filter((s) => s !== 'partners:manage'),
      account_ids: [second.accountId],
    })
    expect(key.status, key.text).toBe(201)
    expect(key.body.account_ids).toEqual([home.accountId, second.accountId])
    multi = createApi(base, key.body.secret)
    agent = await buildAgent(second.api, second.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
    await site.close()
  }, 120_000)

  for (const form of FORMS) {
    it(`reaches the second account's outbound resources with account_id in the ${form === 'header' ? 'X-Svc-Account header' : form}`, async () => {
      verifies('behaviour.account-resolution', 'auth.account-resolution')
      const as = named(multi, form, second.accountId)
      const asHome = multi

      // Profiles: create under the agent, read, patch, clone, build state.
      const profile = ok(await as.post(`/agents/${agent}/profiles`, { name: `Via ${form}`, role: 'a caller' }), 201)
      const prf = profile.profile_id as string
      expect(ok(await as.get(`/agents/${agent}/profiles`)).data.map((p: any) => p.profile_id)).toContain(prf)
      expect(ok(await as.get(`/profiles/${prf}`))).toMatchObject({ profile_id: prf, agent_id: agent })
      expect(ok(await as.patch(`/profiles/${prf}`, { goal: 'Say hello.' })).goal).toBe('Say hello.')
      const copy = ok(await as.post(`/profiles/${prf}/clone`), 201)
      expect(copy.agent_id).toBe(agent)
      expectError(await as.get(`/profiles/${prf}/build`), 404, 'not_found')
      // The home account has none of it.
      expectError(await asHome.get(`/profiles/${prf}`), 404, 'not_found')
      expectError(await asHome.post(`/agents/${agent}/profiles`, { name: 'x', role: 'y' }), 404, 'agent_not_found')

      // Contact lists: create, import (JSON), items.
      const list = ok(await as.post(`/agents/${agent}/lists`, { name: `List via ${form}` }), 201)
      const lst = list.list_id as string
      const phones = [freshNumber(), freshNumber()]
      const imported = ok(await as.post(`/lists/${lst}/import`, { contacts: phones.map((phone) => ({ phone })) }))
      expect(imported.imported).toBe(2)
      expect(ok(await as.get(`/lists/${lst}/items`)).data).toHaveLength(2)
      expect(ok(await as.get(`/agents/${agent}/lists`)).data.map((l: any) => l.list_id)).toContain(lst)
      expectError(await asHome.get(`/lists/${lst}/items`), 404, 'not_found')

      // Do-not-call: add, list, delete.
      const blocked = freshNumber()
      const dnc = ok(await as.post('/dnc', { phone: blocked }), 201)
      expect(dnc.account_id).toBe(second.accountId)
      expect(ok(await as.get(`/dnc?phone=${encodeURIComponent(blocked)}`)).data).toHaveLength(1)
      expect(ok(await asHome.get(`/dnc?phone=${encodeURIComponent(blocked)}`)).data).toHaveLength(0)
      expectError(await asHome.delete(`/dnc/${dnc.dnc_id}`), 404, 'not_found')
      expect((await as.delete(`/dnc/${dnc.dnc_id}`)).status).toBe(204)

      // Phone numbers: add, read, patch, list, delete.
      const number = ok(await as.post('/phone-numbers', { e164: freshNumber(), agent_id: agent }), 201)
      expect(number.account_id).toBe(second.accountId)
      expect(ok(await as.get(`/phone-numbers/${number.number_id}`)).agent_id).toBe(agent)
      expect(ok(await as.patch(`/phone-numbers/${number.number_id}`, { label: form })).label).toBe(form)
      expect(ok(await as.get('/phone-numbers')).data.map((n: any) => n.number_id)).toContain(number.number_id)
      expectError(await asHome.get(`/phone-numbers/${number.number_id}`), 404, 'not_found')
      expect((await as.delete(`/phone-numbers/${number.number_id}`)).status).toBe(204)

      // Calls: place one, read it, list it, cancel (or find it already over).
      const call = ok(await as.post('/calls', { agent_id: agent, to: silentNumber(), profile_id: prf }), 201)
      expect(call.account_id).toBe(second.accountId)
      expect(ok(await as.get(`/calls/${call.call_id}`)).call_id).toBe(call.call_id)
      expect(ok(await as.get(`/calls?agent_id=${agent}`)).data.map((c: any) => c.call_id)).toContain(call.call_id)
      expectError(await asHome.get(`/calls/${call.call_id}`), 404, 'not_found')
      expect([200, 409]).toContain((await as.delete(`/calls/${call.call_id}`)).status)

      // Campaigns: create, read, start, pause, stop, progress, contacts, list.
      const campaign = ok(
        await as.post('/campaigns', {
          agent_id: agent,
          profile_id: prf,
          list_id: lst,
          name: `Campaign via ${form}`,
          schedule: CLOSED(),
        }),
        201,
      )
      const cmp = campaign.campaign_id as string
      expect(ok(await as.get(`/campaigns/${cmp}`)).status).toBe('draft')
      expect(ok(await as.post(`/campaigns/${cmp}/start`)).status).toBe('running')
      expect(ok(await as.post(`/campaigns/${cmp}/pause`)).status).toBe('paused')
      expect(ok(await as.get(`/campaigns/${cmp}/progress`)).total).toBe(2)
      expect(ok(await as.get(`/campaigns/${cmp}/contacts`)).data).toHaveLength(2)
      expect(ok(await as.get('/campaigns')).data.map((c: any) => c.campaign_id)).toContain(cmp)
      expectError(await asHome.post(`/campaigns/${cmp}/stop`), 404, 'not_found')
      expect(ok(await as.post(`/campaigns/${cmp}/stop`)).status).toBe('stopped')

      // Not only outbound: the agent routes resolve the same way.
      expect(ok(await as.get(`/agents/${agent}`)).account_id).toBe(second.accountId)
      expectError(await asHome.get(`/agents/${agent}`), 404, 'agent_not_found')
    }, 120_000)
  }

  it('refuses an account not on the credential with 403 forbidden_account in every form, before anything runs', async () => {
    verifies('behaviour.account-resolution', 'auth.account-resolution')
    for (const form of FORMS) {
      const as = named(multi, form, stranger.accountId)
      const blocked = freshNumber()
      for (const r of [
        await as.get('/calls'),
        await as.get(`/agents/${agent}/profiles`),
        await as.post('/dnc', { phone: blocked }),
        await as.post(`/agents/${agent}/lists`, { name: 'x' }),
        await as.post('/phone-numbers', { e164: freshNumber() }),
        await as.get('/campaigns'),
        await as.post('/calls', { agent_id: agent, to: silentNumber(), role: 'a caller' }),
      ])
        expectError(r, 403, 'forbidden_account', 'account_id')
      // Nothing was written anywhere.
      expect(
        ok(await named(multi, form, second.accountId).get(`/dnc?phone=${encodeURIComponent(blocked)}`)).data,
      ).toEqual([])
      expect(ok(await stranger.api.get(`/dnc?phone=${encodeURIComponent(blocked)}`)).data).toEqual([])
    }
    // A malformed account id is 400 invalid_id; the query form takes one account on single-account routes.
    expectError(await multi.get('/calls?account_id=bob'), 400, 'invalid_id', 'account_id')
    expectError(
      await multi.post('/dnc', { phone: freshNumber(), account_id: 7 }),
      400,
      'validation_error',
      'account_id',
    )
    expectError(
      await multi.get(`/calls?account_id=${home.accountId}&account_id=${second.accountId}`),
      400,
      'validation_error',
      'account_id',
    )
    // account_id is read from a POST body only: a patch naming it is an unknown field.
    expectError(
      await multi.patch(`/agents/${agent}/widget`, { account_id: second.accountId, appearance: { theme: 'dark' } }),
      400,
      'unsupported_field',
      'account_id',
    )
  })

  it('the contract order decides between forms: query, then body, then X-Svc-Account, then home', async () => {
    verifies('behaviour.account-resolution', 'auth.account-resolution')
    const phone = freshNumber()
    // The query wins over the body and the header.
    const q = await multi.post(
      `/dnc?account_id=${second.accountId}`,
      { phone, account_id: home.accountId },
      { headers: { 'x-svc-account': home.accountId } },
    )
    expect(ok(q, 201).account_id).toBe(second.accountId)
    // The body wins over the header.
    const b = await multi.post(
      '/dnc',
      { phone, account_id: home.accountId },
      { headers: { 'x-svc-account': second.accountId } },
    )
    expect(ok(b, 201).account_id).toBe(home.accountId)
    // usr_<n> names the same tenant as acc_<n>.
    const u = await multi.get(`/dnc?phone=${encodeURIComponent(phone)}&account_id=${second.userId}`)
    expect(ok(u).data.map((e: any) => e.account_id)).toEqual([second.accountId])
  })

  it('a multipart import names its account in an account_id part', async () => {
    verifies('behaviour.account-resolution')
    const list = ok(await named(multi, 'header', second.accountId).post(`/agents/${agent}/lists`, { name: 'CSV' }), 201)
    const boundary = 'svc-test-boundary'
    const form = (account: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="account_id"\r\n\r\n${account}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n` +
      `phone\n${freshNumber()}\n\r\n--${boundary}--\r\n`
    const upload = (account: string) =>
      multi.request('POST', `/lists/${list.list_id}/import`, {
        raw: form(account),
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      })
    expect(ok(await upload(second.accountId)).imported).toBe(1)
    // Naming the home account, the list is another account's: 404; naming a stranger's: 403.
    expectError(await upload(home.accountId), 404, 'not_found')
    expectError(await upload(stranger.accountId), 403, 'forbidden_account', 'account_id')
  })

  it('the master key still needs X-Svc-Account on data routes; with it the body form is not needed', async () => {
    verifies('behaviour.account-resolution', 'auth.master-data-route')
    expectError(
      await master.post('/dnc', { phone: freshNumber(), account_id: second.accountId }),
      403,
      'forbidden_account',
    )
    const r = await master.post('/dnc', { phone: freshNumber() }, { headers: { 'x-svc-account': second.accountId } })
    expect(ok(r, 201).account_id).toBe(second.accountId)
  })

  it('the OpenAPI document shows account_id on every data route: query, POST body and X-Svc-Account', async () => {
    verifies('behaviour.account-resolution', 'openapi.document')
    const doc = (await createApi(base).get('/openapi.json')).body
    const names = (op: any) => (op.parameters ?? []).map((p: any) => `${p.in}:${p.name}`)
    for (const [path, method] of [
      ['/calls/{call}', 'get'],
      ['/profiles/{prf}', 'patch'],
      ['/agents/{agt}/profiles', 'get'],
      ['/campaigns/{cmp}/start', 'post'],
      ['/agents/{agt}', 'get'],
    ]) {
      const op = doc.paths[path][method]
      expect(names(op), `${method} ${path}`).toEqual(
        expect.arrayContaining(['query:account_id', 'header:X-Svc-Account']),
      )
    }
    for (const path of ['/calls', '/dnc', '/campaigns', '/phone-numbers', '/campaigns/{cmp}/start']) {
      const schema = doc.paths[path].post.requestBody.content['application/json'].schema
      expect(Object.keys(schema.properties), path).toContain('account_id')
    }
    const multipart = doc.paths['/lists/{lst}/import'].post.requestBody.content['multipart/form-data'].schema
    expect(Object.keys(multipart.properties)).toContain('account_id')
    // Not on a patch body, nor on routes that are not account-scoped.
    expect(
      Object.keys(doc.paths['/profiles/{prf}'].patch.requestBody.content['application/json'].schema.properties),
    ).not.toContain('account_id')
    expect(names(doc.paths['/users'].get)).not.toContain('query:account_id')
  })
})

describe('account resolution for a partner key', () => {
  it("reaches a member's outbound resources through each form, and no other tenant's", async () => {
    verifies('behaviour.account-resolution', 'partners.member-accounts')
    const p = await createTenant(master, {
      scopes: ['partners:manage', 'outbound:read', 'outbound:write', 'agents:read', 'agents:write'],
    })
    const m = await p.api.post('/partners/members', { email: uniqueEmail('member') })
    expect(m.status, m.text).toBe(201)
    const member = m.body.account_id as string
    const outsider = await createTenant(master)
    for (const form of FORMS) {
      const as = named(p.api, form, member)
      const phone = freshNumber()
      const dnc = ok(await as.post('/dnc', { phone }), 201)
      expect(dnc.account_id).toBe(member)
      expect(ok(await as.get(`/dnc?phone=${encodeURIComponent(phone)}`)).data).toHaveLength(1)
      expect(ok(await p.api.get(`/dnc?phone=${encodeURIComponent(phone)}`)).data).toHaveLength(0)
      const number = ok(await as.post('/phone-numbers', { e164: freshNumber() }), 201)
      expect(number.account_id).toBe(member)
      expect(ok(await as.get(`/phone-numbers/${number.number_id}`)).number_id).toBe(number.number_id)
      expectError(await p.api.get(`/phone-numbers/${number.number_id}`), 404, 'not_found')
      expect(ok(await as.get('/calls')).data).toEqual([])
      expectError(await named(p.api, form, outsider.accountId).get('/calls'), 403, 'forbidden_account', 'account_id')
    }
  })
})
