// Prompt versions over HTTP on a server of its own: list, read, deploy, restore, labels, the singular
// account alias, and the deploy markers of GET /agent-versions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { err, type Api } from '../helpers/api'
import { startSeededServer } from '../helpers/agents'
import type { TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000' }
let server: TestServer
let t: Tenant
let other: Tenant
let api: Api
let readOnly: Api
let writer: Api
let multi: Api
let master: Api
let a1: string, a2: string, b1: string

beforeAll(async () => {
  const seeded = await startSeededServer({
    env,
    prepare: async (m) => {
      const t = await createTenant(m)
      const other = await createTenant(m)
      const ro = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })
      const w = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read', 'agents:write'] })
      const mk = await m.post(`/users/${t.userId}/credentials`, {
        scopes: ['agents:read'],
        account_ids: [other.accountId],
      })
      return {
        t,
        other,
        readOnlyKey: ro.body.secret as string,
        writerKey: w.body.secret as string,
        multiKey: mk.body.secret as string,
      }
    },
    agents: ({ t, other }) => [
      { accountId: t.accountId, name: 'One' },
      { accountId: t.accountId, name: 'Two' },
      { accountId: other.accountId },
    ],
  })
  server = seeded.server
  ;({ t, other } = seeded.prepared)
  ;[a1, a2, b1] = seeded.agentIds
  api = seeded.as(t.key)
  readOnly = seeded.as(seeded.prepared.readOnlyKey)
  writer = seeded.as(seeded.prepared.writerKey)
  multi = seeded.as(seeded.prepared.multiKey)
  master = seeded.master
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const versionN = (v: string) => Number(/-v(\d+)$/.exec(v)![1])

describe('GET /agents/{agt}/prompts', () => {
  it('lists the build versions newest first without body; type filters; the envelope never pages', async () => {
    verifies('agents.prompts', 'envelope.list')
    const r = await api.get(`/agents/${a1}/prompts`)
    expect(r.status).toBe(200)
    expect(r.body.pagination).toEqual({ limit: 3, has_more: false, next_cursor: null })
    expect(r.body.data.map((p: any) => p.label)).toEqual(['build-1-voice_chat', 'build-1-chat', 'build-1-phone'])
    for (const p of r.body.data) {
      expect(p).not.toHaveProperty('body')
      expect(p).toMatchObject({
        agent_id: a1,
        active: true,
        restored_from: null,
        notes: 'Build 1',
        agent_version: `agt${a1.slice(4)}-v1`,
      })
      expect(p.id).toMatch(/^pv_\d+$/)
    }
    const chat = await api.get(`/agents/${a1}/prompts?type=chat`)
    expect(chat.body.data.map((p: any) => p.type)).toEqual(['chat'])
    expect(err(await api.get(`/agents/${a1}/prompts?type=sms`))).toMatchObject({
      code: 'unsupported_filter',
      field: 'type',
    })
    expect(err(await api.get(`/agents/${a1}/prompts?limit=5`)).code).toBe('unsupported_filter')
    expect(err(await api.get(`/agents/${b1}/prompts`)).code).toBe('agent_not_found')
  })

  it("GET /agents/{agt}/prompts/{pv} includes the body; another agent's version is 404", async () => {
    verifies('agents.prompts')
    const list = (await api.get(`/agents/${a1}/prompts?type=phone`)).body.data
    const r = await api.get(`/agents/${a1}/prompts/${list[0].id}`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: list[0].id, type: 'phone', body: 'Phone prompt v1', label: 'build-1-phone' })
    expect(err(await api.get(`/agents/${a2}/prompts/${list[0].id}`)).code).toBe('not_found')
    expect(err(await api.get(`/agents/${a1}/prompts/pv_987654321`)).code).toBe('not_found')
    expect(err(await api.get(`/agents/${a1}/prompts/abc`)).code).toBe('invalid_id')
  })
})

describe('POST /agents/{agt}/prompts', () => {
  it('deploys in one step: agent column, retired predecessor, new current label, one bump', async () => {
    verifies('agents.prompts')
    const before = (await api.get(`/agents/${a1}`)).body
    const r = await api.post(`/agents/${a1}/prompts`, {
      type: 'chat',
      body: 'Chat prompt v2',
      label: 'chat-v2',
      notes: 'Shorter answers',
    })
    expect(r.status).toBe(201)
    expect(versionN(r.body.agent_version)).toBe(versionN(before.agent_version) + 1)
    expect(r.body).toMatchObject({
      agent_id: a1,
      prompt_version: 'chat-v2',
      version: {
        type: 'chat',
        body: 'Chat prompt v2',
        label: 'chat-v2',
        notes: 'Shorter answers',
        active: true,
        restored_from: null,
        agent_version: r.body.agent_version,
      },
    })
    expect(r.body).not.toHaveProperty('restored_from')
    const after = (await api.get(`/agents/${a1}`)).body
    expect(after).toMatchObject({
      chat_instructions: 'Chat prompt v2',
      prompt_version: 'chat-v2',
      agent_version: r.body.agent_version,
      instructions: 'Phone prompt v1',
    })
    const chats = (await api.get(`/agents/${a1}/prompts?type=chat`)).body.data
    expect(chats.map((p: any) => [p.label, p.active])).toEqual([
      ['chat-v2', true],
      ['build-1-chat', false],
    ])
    // Versions are immutable: the old one still reads its own body.
    expect((await api.get(`/agents/${a1}/prompts/${chats[1].id}`)).body.body).toBe('Chat prompt v1')
  })

  it('a label already used on the agent is 409 version_label_exists; the same label on another agent is fine', async () => {
    verifies('agents.prompts')
    const dup = await api.post(`/agents/${a1}/prompts`, { type: 'phone', body: 'x', label: 'build-1-chat' })
    expect(dup.status).toBe(409)
    expect(err(dup)).toMatchObject({ code: 'version_label_exists', field: 'label' })
    expect(
      (await api.post(`/agents/${a2}/prompts`, { type: 'phone', body: 'Phone for two', label: 'chat-v2' })).status,
    ).toBe(201)
    // Nothing changed on the refused request.
    expect((await api.get(`/agents/${a1}`)).body.instructions).toBe('Phone prompt v1')
  })

  it('validates type, body and label (1 to 80 characters) and refuses unknown keys; needs agents:write', async () => {
    verifies('agents.prompts', 'errors.validation_error', 'errors.unsupported_field', 'auth.scope')
    const p = (b: unknown) => api.post(`/agents/${a1}/prompts`, b)
    expect(err(await p({ type: 'sms', body: 'x', label: 'l' }))).toMatchObject({
      code: 'validation_error',
      field: 'type',
    })
    expect(err(await p({ type: 'chat', label: 'l' }))).toMatchObject({ code: 'validation_error', field: 'body' })
    expect(err(await p({ type: 'chat', body: 'x' }))).toMatchObject({ code: 'validation_error', field: 'label' })
    expect(err(await p({ type: 'chat', body: 'x', label: '' }))).toMatchObject({
      code: 'validation_error',
      field: 'label',
    })
    expect(err(await p({ type: 'chat', body: 'x', label: 'l'.repeat(81) }))).toMatchObject({
      code: 'validation_error',
      field: 'label',
    })
    expect((await p({ type: 'voice_chat', body: 'VC', label: 'l'.repeat(80) })).status).toBe(201)
    expect(err(await p({ type: 'chat', body: 'x', label: 'z', extra: 1 }))).toMatchObject({
      code: 'unsupported_field',
      field: 'extra',
    })
    expect(err(await readOnly.post(`/agents/${a1}/prompts`, { type: 'chat', body: 'x', label: 'ro' })).code).toBe(
      'insufficient_scope',
    )
    expect(err(await api.post(`/agents/${b1}/prompts`, { type: 'chat', body: 'x', label: 'theirs' })).code).toBe(
      'agent_not_found',
    )
  })

  it('POST /accounts/{acc}/agents/{agt}/prompt (singular) behaves as the flat form', async () => {
    verifies('agents.aliases', 'agents.prompts')
    const r = await api.post(`/accounts/${t.accountId}/agents/${a2}/prompt`, {
      type: 'chat',
      body: 'Alias chat',
      label: 'alias-1',
    })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      agent_id: a2,
      prompt_version: 'alias-1',
      version: { label: 'alias-1', body: 'Alias chat' },
    })
    expect((await api.get(`/agents/${a2}`)).body.chat_instructions).toBe('Alias chat')
    expect(
      err(
        await api.post(`/accounts/${t.accountId}/agents/${a2}/prompt`, {
          type: 'chat',
          body: 'again',
          label: 'alias-1',
        }),
      ).code,
    ).toBe('version_label_exists')
    expect(
      err(await api.post(`/accounts/${other.accountId}/agents/${b1}/prompt`, { type: 'chat', body: 'x', label: 'y' }))
        .code,
    ).toBe('agent_not_found')
  })
})

describe('POST /agents/{agt}/prompts/{pv}/restore', () => {
  it('deploys a new version with the old body, labelled <old>-restored, carrying restored_from; bumps once', async () => {
    verifies('agents.prompts')
    const old = (await api.get(`/agents/${a1}/prompts?type=chat`)).body.data.find(
      (p: any) => p.label === 'build-1-chat',
    )
    const before = (await api.get(`/agents/${a1}`)).body.agent_version
    const r = await api.post(`/agents/${a1}/prompts/${old.id}/restore`)
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      agent_id: a1,
      prompt_version: 'build-1-chat-restored',
      restored_from: old.id,
      version: {
        type: 'chat',
        body: 'Chat prompt v1',
        label: 'build-1-chat-restored',
        restored_from: old.id,
        active: true,
      },
    })
    expect(r.body.version.id).not.toBe(old.id)
    expect(versionN(r.body.agent_version)).toBe(versionN(before) + 1)
    expect((await api.get(`/agents/${a1}`)).body).toMatchObject({
      chat_instructions: 'Chat prompt v1',
      prompt_version: 'build-1-chat-restored',
    })
    const again = await api.post(`/agents/${a1}/prompts/${old.id}/restore`)
    expect(again.status).toBe(409)
    expect(err(again)).toMatchObject({ code: 'version_label_exists', field: 'label' })
    const named = await api.post(`/agents/${a1}/prompts/${old.id}/restore`, { label: 'back-to-build' })
    expect(named.status).toBe(201)
    expect(named.body.version.label).toBe('back-to-build')
  })

  it('takes only {label}; unknown versions are 404; needs agents:admin', async () => {
    verifies('agents.prompts', 'errors.unsupported_field', 'contract.smaller-points')
    const pv = (await api.get(`/agents/${a1}/prompts`)).body.data[0].id
    expect(err(await api.post(`/agents/${a1}/prompts/${pv}/restore`, { label: 'x', body: 'y' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'body',
    })
    expect(err(await api.post(`/agents/${a1}/prompts/${pv}/restore`, { label: '' }))).toMatchObject({
      code: 'validation_error',
      field: 'label',
    })
    expect(err(await api.post(`/agents/${a1}/prompts/pv_987654321/restore`)).code).toBe('not_found')
    expect(err(await api.post(`/agents/${a2}/prompts/${pv}/restore`)).code).toBe('not_found')
    expect(err(await readOnly.post(`/agents/${a1}/prompts/${pv}/restore`)).code).toBe('insufficient_scope')
    // agents:write deploys new prompts, but rolling back to an old one takes agents:admin.
    const refused = await writer.post(`/agents/${a1}/prompts/${pv}/restore`, { label: 'by-a-writer' })
    expect(err(refused)).toMatchObject({ code: 'insufficient_scope' })
    expect(err(refused).message).toContain('agents:admin')
  })
})

describe('GET /agent-versions', () => {
  it("lists deploy markers newest first for the credential's account; agent_id, from and to filter", async () => {
    verifies('agents.versions')
    const r = await api.get('/agent-versions')
    expect(r.status).toBe(200)
    expect(r.body.pagination.has_more).toBe(false)
    const rows = r.body.data
    expect(rows.every((m: any) => m.account_id === t.accountId)).toBe(true)
    const times = rows.map((m: any) => Date.parse(m.deployed_at))
    expect([...times].sort((x, y) => y - x)).toEqual(times)
    const mine = rows.filter((m: any) => m.agent_id === a1)
    expect(mine.map((m: any) => versionN(m.agent_version))).toEqual(
      [...mine.map((m: any) => versionN(m.agent_version))].sort((x, y) => y - x),
    )
    expect(mine.at(-1)).toMatchObject({
      agent_version: `agt${a1.slice(4)}-v1`,
      reason: 'build',
      prompt_version: 'build-1-voice_chat',
    })
    expect(mine.map((m: any) => m.reason)).toContain('prompt_restore')
    expect(Object.keys(mine[0]).sort()).toEqual([
      'account_id',
      'agent_id',
      'agent_version',
      'changed',
      'deployed_at',
      'prompt_version',
      'reason',
    ])
    const one = await api.get(`/agent-versions?agent_id=${a2}`)
    expect(one.body.data.length).toBeGreaterThan(0)
    expect(one.body.data.every((m: any) => m.agent_id === a2)).toBe(true)
    const future = await api.get('/agent-versions?from=2100-01-01T00:00:00Z')
    expect(future.body.data).toEqual([])
    const past = await api.get('/agent-versions?to=2000-01-01T00:00:00Z')
    expect(past.body.data).toEqual([])
    const bounded = await api.get(`/agent-versions?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z`)
    expect(bounded.body.data.length).toBe(rows.length)
  })

  it("meta carries the window like every dated list's: from, to (null when open) and applied_default_range", async () => {
    verifies('agents.versions', 'contract.smaller-points')
    const open = await api.get('/agent-versions')
    expect(open.body.meta).toMatchObject({ from: null, to: null, applied_default_range: false })
    const bounded = await api.get('/agent-versions?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00.5Z')
    expect(bounded.body.meta).toMatchObject({
      from: '2000-01-01T00:00:00.000Z',
      to: '2100-01-01T00:00:00.500Z',
      applied_default_range: false,
    })
    const half = await api.get('/agent-versions?from=2000-01-01T00:00:00Z&limit=1')
    expect(half.body.meta).toMatchObject({ from: '2000-01-01T00:00:00.000Z', to: null })
    const next = await api.get(
      `/agent-versions?from=2000-01-01T00:00:00Z&limit=1&cursor=${encodeURIComponent(half.body.pagination.next_cursor)}`,
    )
    expect(next.body.meta).toMatchObject({ from: '2000-01-01T00:00:00.000Z', to: null, applied_default_range: false })
    // Timestamp input ends in Z.
    expect(err(await api.get('/agent-versions?from=2000-01-01T00:00:00%2B01:00'))).toMatchObject({
      code: 'invalid_date',
      field: 'from',
    })
  })

  it('pages with a cursor bound to the query', async () => {
    verifies('agents.versions', 'cursor.signed-and-bound')
    const all = (await api.get('/agent-versions?limit=100')).body.data
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await api.get(`/agent-versions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(page.status).toBe(200)
      seen.push(...page.body.data.map((m: any) => `${m.agent_id}/${m.agent_version}`))
      cursor = page.body.pagination.next_cursor
    } while (cursor)
    expect(seen).toEqual(all.map((m: any) => `${m.agent_id}/${m.agent_version}`))
    const first = await api.get('/agent-versions?limit=2')
    expect(
      err(await api.get(`/agent-versions?limit=3&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`))
        .code,
    ).toBe('invalid_cursor')
    expect(
      err(
        await api.get(
          `/agent-versions?limit=2&agent_id=${a1}&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`,
        ),
      ).code,
    ).toBe('invalid_cursor')
  })

  it('answers invalid_id, invalid_date, invalid_limit, invalid_cursor and unsupported_filter', async () => {
    verifies('agents.versions', 'errors.unsupported_filter')
    expect(err(await api.get('/agent-versions?agent_id=agent7'))).toMatchObject({
      code: 'invalid_id',
      field: 'agent_id',
    })
    expect(err(await api.get('/agent-versions?account_id=bob'))).toMatchObject({ code: 'invalid_id' })
    expect(err(await api.get('/agent-versions?from=yesterday'))).toMatchObject({ code: 'invalid_date', field: 'from' })
    expect(err(await api.get('/agent-versions?to=2026-01-01'))).toMatchObject({ code: 'invalid_date', field: 'to' })
    expect(err(await api.get('/agent-versions?limit=0')).code).toBe('invalid_limit')
    expect(err(await api.get('/agent-versions?limit=x')).code).toBe('invalid_limit')
    expect(err(await api.get('/agent-versions?cursor=garbage')).code).toBe('invalid_cursor')
    expect(err(await api.get('/agent-versions?sort=asc'))).toMatchObject({ code: 'unsupported_filter', field: 'sort' })
  })

  it('account_id selects accounts on the credential; a key with several accounts must name them', async () => {
    verifies('agents.versions', 'auth.account-resolution', 'tenancy.agents')
    expect(err(await api.get(`/agent-versions?account_id=${other.accountId}`)).code).toBe('forbidden_account')
    expect((await api.get(`/agent-versions?account_id=${t.userId}`)).status).toBe(200)
    expect(err(await multi.get('/agent-versions'))).toMatchObject({ code: 'validation_error', field: 'account_id' })
    const both = await multi.get(`/agent-versions?account_id=${t.accountId}&account_id=${other.accountId}&limit=100`)
    expect(new Set(both.body.data.map((m: any) => m.account_id))).toEqual(new Set([t.accountId, other.accountId]))
    const theirs = await multi.get(`/agent-versions?account_id=${other.accountId}`)
    expect(theirs.body.data.map((m: any) => m.agent_id)).toEqual([b1])
    expect(err(await master.get('/agent-versions')).code).toBe('forbidden_account')
    const viaMaster = await master.get('/agent-versions', { headers: { 'x-svc-account': other.accountId } })
    expect(viaMaster.body.data.map((m: any) => m.agent_id)).toEqual([b1])
  })
})
