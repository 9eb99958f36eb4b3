// Accounts over HTTP: read, list, patch, limits (with per-user overrides), balance, usage validation,
// account resolution and the master key's rules.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant

beforeAll(async () => {
  t = await createTenant(master, { plan: 'trial' })
})

describe('reading accounts', () => {
  it('GET /accounts/{acc} answers the Account; usr_ names the same tenant', async () => {
    verifies('accounts.read')
    const r = await t.api.get(`/accounts/${t.accountId}`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      account_id: t.accountId,
      status: 'active',
      plan: 'trial',
      external_ids: {},
      default_redaction: false,
      transcript_retention_days: null,
    })
    expect(Object.keys(r.body).sort()).toEqual([
      'account_id',
      'created_at',
      'default_redaction',
      'external_ids',
      'meta',
      'name',
      'plan',
      'plan_expires_at',
      'status',
      'transcript_retention_days',
      'updated_at',
    ])
    expect((await t.api.get(`/accounts/${t.userId}`)).body.account_id).toBe(t.accountId)
    expect(err(await t.api.get('/accounts/agt_1')).code).toBe('invalid_id')
  })

  it('GET /accounts lists the accounts on the key; the master key lists every account', async () => {
    verifies('accounts.read', 'auth.master-key', 'envelope.list')
    const mine = await t.api.get('/accounts')
    expect(mine.body.data.map((a: any) => a.account_id)).toEqual([t.accountId])
    expect(mine.body.pagination).toEqual({ limit: 50, has_more: false, next_cursor: null })
    const second = await createTenant(master)
    const all = await master.get('/accounts?limit=100')
    expect(all.status).toBe(200)
    expect(all.body.data.map((a: any) => a.account_id)).toEqual(expect.arrayContaining([t.accountId, second.accountId]))
    const two = await master.get(`/accounts?account_id=${t.accountId}&account_id=${t.userId}`)
    expect(two.body.data.map((a: any) => a.account_id)).toEqual([t.accountId])
  })

  it('account_id naming an account not on the key is 403 forbidden_account for the whole request', async () => {
    verifies('auth.account-resolution')
    const other = await createTenant(master)
    const r = await t.api.get(`/accounts?account_id=${t.accountId}&account_id=${other.accountId}`)
    expect(r.status).toBe(403)
    expect(err(r)).toMatchObject({ code: 'forbidden_account', field: 'account_id' })
    expect(err(await t.api.get('/accounts', { headers: { 'x-svc-account': other.accountId } })).code).toBe(
      'forbidden_account',
    )
    expect((await t.api.get('/accounts', { headers: { 'x-svc-account': t.accountId } })).status).toBe(200)
    expect(err(await t.api.get('/accounts?account_id=garbage')).code).toBe('invalid_id')
  })

  it('a key with several accounts reads each; account_id selects which', async () => {
    verifies('auth.account-resolution')
    const other = await createTenant(master)
    const multi = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      account_ids: [other.accountId],
    })
    const k = createApi(base, multi.body.secret)
    expect((await k.get(`/accounts/${other.accountId}`)).status).toBe(200)
    const listed = await k.get('/accounts')
    expect(listed.body.data.map((a: any) => a.account_id).sort()).toEqual([t.accountId, other.accountId].sort())
    expect((await k.get(`/accounts?account_id=${other.accountId}`)).body.data.map((a: any) => a.account_id)).toEqual([
      other.accountId,
    ])
  })
})

describe('PATCH /accounts/{acc}', () => {
  it('merges external_ids, sets default_redaction and transcript_retention_days', async () => {
    verifies('accounts.patch')
    await t.api.patch(`/accounts/${t.accountId}`, { external_ids: { crm: 'a', erp: 'b' } })
    const r = await t.api.patch(`/accounts/${t.accountId}`, {
      external_ids: { crm: null, hub: 'h' },
      default_redaction: true,
      transcript_retention_days: 30,
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      external_ids: { erp: 'b', hub: 'h' },
      default_redaction: true,
      transcript_retention_days: 30,
    })
    expect((await t.api.get(`/accounts/${t.accountId}`)).body.external_ids).toEqual({ erp: 'b', hub: 'h' })
  })

  it('refuses unknown fields, empty patches and bad values; needs accounts:write', async () => {
    verifies('accounts.patch', 'errors.empty_update', 'auth.scope')
    expect(err(await t.api.patch(`/accounts/${t.accountId}`, { plan: 'starter' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'plan',
    })
    expect(err(await t.api.patch(`/accounts/${t.accountId}`, {})).code).toBe('empty_update')
    expect(err(await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: 'yes' }))).toMatchObject({
      code: 'validation_error',
      field: 'default_redaction',
    })
    expect(err(await t.api.patch(`/accounts/${t.accountId}`, { transcript_retention_days: 0 }))).toMatchObject({
      code: 'validation_error',
      field: 'transcript_retention_days',
    })
    expect(err(await master.patch(`/accounts/${t.accountId}`, { default_redaction: false })).code).toBe(
      'insufficient_scope',
    )
  })
})

describe('limits, balance and usage', () => {
  it('limits report quotas, rate limits and call counters; per-user overrides apply', async () => {
    verifies('accounts.limits')
    const r = await t.api.get(`/accounts/${t.accountId}/limits`)
    expect(r.status).toBe(200)
    const now = new Date()
    expect(r.body.quotas.day).toBe(now.toISOString().slice(0, 10))
    expect(r.body.quotas.resets_at).toBe(
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
    )
    expect(r.body.quotas).toMatchObject({
      agent_creates: { limit: 10, used: 0 },
      builds: { limit: 50, used: 0 },
      kb_documents: { limit: 500, used: 0 },
      chat_messages: { limit: 5000, used: 0 },
      webhook_tests: { limit: 50, used: 0 },
      max_concurrent_builds: 2,
      builds_in_progress: 0,
    })
    expect(Object.keys(r.body.rate_limits).sort()).toEqual([
      'audio',
      'backfill',
      'build',
      'calls',
      'chat',
      'metrics',
      'read',
      'write',
    ])
    expect(r.body.rate_limits.backfill).toBe(10)
    expect(r.body).toMatchObject({ account_id: t.accountId, calls_today: 0, calls_in_progress: 0 })
    await master.patch(`/users/${t.userId}`, {
      limits: { max_agent_creates_per_day: 3, max_builds_per_day: 7, max_concurrent_builds: 1, max_calls_per_day: 12 },
    })
    const o = await master.get(`/accounts/${t.accountId}/limits`)
    expect(o.body.quotas).toMatchObject({ agent_creates: { limit: 3 }, builds: { limit: 7 }, max_concurrent_builds: 1 })
    expect(o.body.max_calls_per_day).toBe(12)
  })

  it('balance answers the Balance; a trial is active until plan_expires_at', async () => {
    verifies('accounts.balance')
    const r = await t.api.get(`/accounts/${t.accountId}/balance`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      account_id: t.accountId,
      wallet_balance: 0,
      currency_code: 'USD',
      monthly_spending: 0,
      plan_limit: 0,
      status: 'active',
    })
    const starter = await createTenant(master, { plan: 'starter' })
    expect((await starter.api.get(`/accounts/${starter.accountId}/balance`)).body.plan_limit).toBeGreaterThan(0)
  })

  it('usage needs from and to, a valid range and known group_by dimensions', async () => {
    verifies('accounts.usage')
    const u = (q: string) => t.api.get(`/accounts/${t.accountId}/usage${q}`)
    expect(err(await u(''))).toMatchObject({ code: 'missing_param', field: 'from' })
    expect(err(await u('?from=2026-01-01T00:00:00Z'))).toMatchObject({ code: 'missing_param', field: 'to' })
    expect(err(await u('?from=2026-01-01&to=2026-02-01T00:00:00Z'))).toMatchObject({
      code: 'invalid_date',
      field: 'from',
    })
    expect(err(await u('?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z'))).toMatchObject({
      code: 'invalid_date_range',
    })
    expect(err(await u('?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&group_by=planet'))).toMatchObject({
      code: 'unsupported_filter',
      field: 'group_by',
    })
    expect(err(await u('?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&group_by=agent,agent'))).toMatchObject({
      code: 'validation_error',
      field: 'group_by',
    })
    expect(
      err(await u('?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&group_by=agent,channel,date,month')),
    ).toMatchObject({ code: 'validation_error' })
    const ok = await u('?from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z&group_by=channel,month')
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ data: [], totals: { conversations: 0, voice_seconds: 0, tokens: 0, cost_usd: 0 } })
    expect(ok.body.meta).toMatchObject({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-12-31T00:00:00.000Z',
      group_by: 'channel,month',
      currency_code: 'USD',
      environment: 'production',
    })
    const dflt = await u('?from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z')
    expect(dflt.body.meta.group_by).toBe('agent')
  })
})

describe('the master key', () => {
  it('has only its implicit scopes: accounts:read yes, usage:read no', async () => {
    verifies('auth.master-key', 'auth.scope')
    expect((await master.get(`/accounts/${t.accountId}`)).status).toBe(200)
    expect((await master.get(`/accounts/${t.accountId}/limits`)).status).toBe(200)
    expect(err(await master.get(`/accounts/${t.accountId}/balance`)).code).toBe('insufficient_scope')
    expect((await master.get('/accounts/acc_987654321')).status).toBe(404)
  })

  it('X-Svc-Account naming an unknown account is 403 forbidden_account', async () => {
    verifies('auth.account-resolution')
    expect(err(await master.get('/accounts', { headers: { 'x-svc-account': 'acc_987654321' } })).code).toBe(
      'forbidden_account',
    )
    const scoped = await master.get('/accounts', { headers: { 'x-svc-account': t.accountId } })
    expect(scoped.status).toBe(200)
  })
})
