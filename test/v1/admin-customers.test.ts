// The operator surface for customers and the wallet (issue 18), over HTTP on the shared server: the
// overview, customer search and the per-customer overview, plan and status changes (a suspension observed
// through the ordinary API, and a resume that works at once), login links, and the wallet as a ledger — the
// balance the account reads equals the sum of its ledger after a run of API chats and a simulated phone call
// on a paid plan whose usage exceeds its limit, and a top-up clears a 402. Every route refuses a missing key
// (401) and a tenant key (403 forbidden).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError, type ApiResponse } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { freshNumber } from '../helpers/phone'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

describe('operator surface: customers and the wallet', () => {
  const base = inject('base')
  const origin = inject('origin')
  const master = createApi(base, inject('masterKey'))
  const anonymous = createApi(base)
  const tag = `${process.pid}${Date.now().toString(36)}`
  let t: Tenant
  let s: Tenant
  let site: TestSite
  let agentId: string
  let phone: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Numbat Nursery',
          '<h1>Numbat Nursery</h1><p>Numbat Nursery sells native plants and opens every day at eight.</p>' +
            '<p>A grevillea seedling costs six dollars.</p><p>We deliver plants across Perth on Fridays.</p>',
        ),
      },
    })
    t = await createTenant(master, { plan: 'starter' })
    s = await createTenant(master, { plan: 'trial' })
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    phone = freshNumber()
    const num = await t.api.post('/phone-numbers', { e164: phone, agent_id: agentId })
    expect(num.status, num.text).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  const wallet = async (usr: string) => {
    const r = await master.get(`/admin/customers/${usr}/wallet?limit=200`)
    expect(r.status, r.text).toBe(200)
    return r.body.data as any[]
  }
  const balance = async (tenant: Tenant) => {
    const r = await tenant.api.get(`/accounts/${tenant.accountId}/balance`)
    expect(r.status, r.text).toBe(200)
    return r.body
  }
  const chat = async (texts: string[]) => {
    const c = await t.api.post('/conversations', { agent_id: agentId, send_greeting: true })
    expect(c.status, c.text).toBe(201)
    for (const text of texts) {
      const m = await t.api.post(`/conversations/${c.body.conversation_id}/messages`, { text })
      expect(m.status, m.text).toBe(200)
    }
    const end = await t.api.post(`/conversations/${c.body.conversation_id}/end`)
    expect([200, 202], end.text).toContain(end.status)
  }
  /** The ledger and the balance agree: the sum of the amounts, the newest balance_after and wallet_balance. */
  const expectLedgerEqualsBalance = async (tenant: Tenant) => {
    const b = await balance(tenant)
    const entries = await wallet(tenant.userId)
    const sum = round4(entries.reduce((n, e) => n + e.amount, 0))
    expect(sum).toBe(b.wallet_balance)
    expect(entries[0].balance_after).toBe(b.wallet_balance)
    // Every balance_after is the running sum, oldest first.
    let running = 0
    for (const e of [...entries].reverse()) {
      running = round4(running + e.amount)
      expect(e.balance_after).toBe(running)
    }
    return { b, entries }
  }

  it('refuses every operator route without a key (401) and with a tenant key (403 forbidden)', async () => {
    verifies('admin.customers.refusals')
    const usr = t.userId
    const routes: [string, string, unknown?][] = [
      ['GET', '/admin/overview'],
      ['GET', '/admin/customers'],
      ['GET', `/admin/customers/${usr}`],
      ['GET', `/admin/customers/${usr}/wallet`],
      ['POST', `/admin/customers/${usr}/wallet/credits`, { amount: 100, reason: 'free money' }],
      ['PATCH', `/admin/customers/${usr}/plan`, { plan: 'starter', plan_limit: 0 }],
      ['PATCH', `/admin/customers/${usr}/status`, { status: 'suspended', reason: 'x' }],
      ['POST', `/admin/customers/${usr}/login-links`],
    ]
    const call = (api: typeof master, [method, path, body]: (typeof routes)[number]): Promise<ApiResponse> =>
      method === 'GET' ? api.get(path) : method === 'POST' ? api.post(path, body) : api.patch(path, body)
    for (const r of routes) {
      expectError(await call(anonymous, r), 401, 'missing_credentials')
      expectError(await call(t.api, r), 403, 'forbidden')
      expectError(await call(s.api, r), 403, 'forbidden')
    }
    // Nothing was changed by the refused writes.
    expect((await wallet(usr)).filter((e) => e.reason === 'free money')).toEqual([])
    expect((await master.get(`/admin/customers/${usr}`)).body.user.status).toBe('active')
    const actions = await master.get(`/admin/actions?target=${usr}`)
    expect(actions.status).toBe(200)
    expect(actions.body.data).toEqual([])
  })

  it('shows the platform overview', async () => {
    verifies('admin.customers.overview')
    const r = await master.get('/admin/overview')
    expect(r.status, r.text).toBe(200)
    const o = r.body
    expect(o.users).toBeGreaterThanOrEqual(2)
    expect(o.accounts.total).toBeGreaterThanOrEqual(2)
    expect(o.accounts.by_plan.starter).toBeGreaterThanOrEqual(1)
    expect(o.accounts.by_plan.trial).toBeGreaterThanOrEqual(1)
    expect(o.accounts.by_status.active).toBeGreaterThanOrEqual(2)
    expect(Object.values(o.accounts.by_plan).reduce((a: number, b) => a + (b as number), 0)).toBe(o.accounts.total)
    expect(o.agents).toBeGreaterThanOrEqual(1)
    expect(o.conversations.last_7_days).toBeGreaterThanOrEqual(o.conversations.today)
    expect(o.calls.last_7_days).toBeGreaterThanOrEqual(o.calls.today)
    expect(typeof o.wallet_total).toBe('number')
    expect(o.errors_5xx_24h).toBeGreaterThanOrEqual(0)
    expect(o.queue_depth === null || o.queue_depth >= 0).toBe(true)
    expect(Date.parse(o.generated_at)).toBeGreaterThan(Date.now() - 60_000)

    // A new chat conversation shows in today's count.
    const before = o.conversations.today
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status, c.text).toBe(201)
    const after = (await master.get('/admin/overview')).body.conversations.today
    expect(after).toBeGreaterThanOrEqual(before + 1)
  })

  it('searches customers by e-mail, name and company, with status and plan filters', async () => {
    verifies('admin.customers.search')
    const u = await master.post('/users', {
      email: `wombat-${tag}@example.com`,
      name: `Wilma Wombat ${tag}`,
      company_name: `Burrow_${tag} Pty`,
      plan: 'trial',
    })
    expect(u.status, u.text).toBe(201)
    const ids = async (query: string) => {
      const r = await master.get(`/admin/customers?${query}`)
      expect(r.status, r.text).toBe(200)
      return (r.body.data as any[]).map((c) => c.user_id)
    }
    expect(await ids(`q=${encodeURIComponent(`WOMBAT-${tag}`)}`)).toEqual([u.body.user_id])
    expect(await ids(`q=${encodeURIComponent(`wilma wombat ${tag}`)}`)).toEqual([u.body.user_id])
    expect(await ids(`q=${encodeURIComponent(`burrow_${tag}`)}`)).toEqual([u.body.user_id])
    // % and _ match themselves.
    expect(await ids(`q=${encodeURIComponent(`burrow%${tag}`)}`)).toEqual([])
    expect(await ids(`q=${encodeURIComponent(tag)}&plan=trial`)).toEqual([u.body.user_id])
    expect(await ids(`q=${encodeURIComponent(tag)}&plan=starter`)).toEqual([])
    expect(await ids(`q=${encodeURIComponent(tag)}&status=suspended`)).toEqual([])
    const one = await master.get(`/admin/customers?q=${encodeURIComponent(t.email)}`)
    expect(one.body.data).toEqual([
      expect.objectContaining({
        user_id: t.userId,
        account_id: t.accountId,
        email: t.email,
        plan: 'starter',
        status: 'active',
        subscription_status: 'active',
        plan_limit: 49,
        currency_code: 'USD',
      }),
    ])
    // Paging: limit 1 gives a cursor to the next page.
    const p1 = await master.get('/admin/customers?limit=1')
    expect(p1.body.data).toHaveLength(1)
    expect(p1.body.pagination.has_more).toBe(true)
    const p2 = await master.get(`/admin/customers?limit=1&cursor=${encodeURIComponent(p1.body.pagination.next_cursor)}`)
    expect(p2.status, p2.text).toBe(200)
    expect(p2.body.data[0].user_id).not.toBe(p1.body.data[0].user_id)

    expectError(await master.get('/admin/customers?status=gone'), 400, 'unsupported_filter', 'status')
    expectError(await master.get('/admin/customers?plan=gold'), 400, 'unsupported_filter', 'plan')
    expectError(await master.get('/admin/customers?limit=0'), 400, 'invalid_limit')
    expectError(await master.get('/admin/customers?cursor=nonsense'), 400, 'invalid_cursor')
  })

  it('shows one customer: user, account, agents, 30-day usage, wallet and recent errors; unknown ids are 404', async () => {
    verifies('admin.customers.customer')
    // A refused request of the tenant shows among its recent errors.
    const bad = await t.api.get('/agents/agt_999999999')
    expect(bad.status).toBe(404)
    // The audit row may land just after the answer: wait for it.
    const o = await until(
      'the refused request among the recent errors',
      async () => {
        const r = await master.get(`/admin/customers/${t.userId}`)
        expect(r.status, r.text).toBe(200)
        return r.body.recent_errors.some((e: any) => e.request_id === bad.body.error.request_id) ? r.body : null
      },
      10_000,
    )
    expect(o.user).toMatchObject({ user_id: t.userId, email: t.email, status: 'active', currency_code: 'USD' })
    expect(o.account).toMatchObject({ account_id: t.accountId, plan: 'starter', status: 'active', plan_limit: 49 })
    expect(o.agents).toEqual([expect.objectContaining({ agent_id: agentId, paused: false })])
    expect(o.usage_30d.conversations).toBeGreaterThanOrEqual(1)
    expect(o.usage_30d.by_channel.map((c: any) => c.channel)).toContain('api')
    expect(o.wallet).toMatchObject({ balance: expect.any(Number), currency_code: 'USD' })
    expect(o.recent_errors).toContainEqual(
      expect.objectContaining({
        request_id: bad.body.error.request_id,
        status_code: 404,
        error_code: bad.body.error.code,
      }),
    )

    for (const path of ['', '/wallet']) {
      expectError(await master.get(`/admin/customers/usr_999999999${path}`), 404, 'not_found')
      expectError(await master.get(`/admin/customers/acc_1${path}`), 400, 'invalid_id')
    }
    expectError(
      await master.post('/admin/customers/usr_999999999/wallet/credits', { amount: 1, reason: 'x' }),
      404,
      'not_found',
    )
    expectError(await master.patch('/admin/customers/usr_999999999/plan', { plan: 'starter' }), 404, 'not_found')
    expectError(
      await master.patch('/admin/customers/usr_999999999/status', { status: 'active', reason: 'x' }),
      404,
      'not_found',
    )
    expectError(await master.post('/admin/customers/usr_999999999/login-links'), 404, 'not_found')
  })

  it('changes the plan (expiry, limit), validates the patch, and records the action', async () => {
    verifies('admin.customers.plan')
    const usr = s.userId
    expectError(await master.patch(`/admin/customers/${usr}/plan`, {}), 400, 'empty_update')
    expectError(await master.patch(`/admin/customers/${usr}/plan`, { plan: 'gold' }), 400, 'validation_error', 'plan')
    expectError(
      await master.patch(`/admin/customers/${usr}/plan`, { plan: 'starter', colour: 'red' }),
      400,
      'unsupported_field',
      'colour',
    )
    expectError(
      await master.patch(`/admin/customers/${usr}/plan`, { plan: 'starter', plan_limit: -1 }),
      400,
      'validation_error',
      'plan_limit',
    )
    expectError(
      await master.patch(`/admin/customers/${usr}/plan`, { plan: 'starter', plan_expires_at: 'tomorrow' }),
      400,
      'invalid_date',
      'plan_expires_at',
    )
    const up = await master.patch(`/admin/customers/${usr}/plan`, { plan: 'starter' })
    expect(up.status, up.text).toBe(200)
    expect(up.body).toMatchObject({ user_id: usr, plan: 'starter', plan_expires_at: null, plan_limit: 49 })
    // The tenant sees it through the ordinary API.
    expect((await s.api.get(`/accounts/${s.accountId}/balance`)).body).toMatchObject({ plan_limit: 49 })
    const until = '2031-01-01T00:00:00.000Z'
    const custom = await master.patch(`/admin/customers/${usr}/plan`, {
      plan: 'trial',
      plan_expires_at: until,
      plan_limit: 0,
    })
    expect(custom.status, custom.text).toBe(200)
    expect(custom.body).toMatchObject({ plan: 'trial', plan_expires_at: until, plan_limit: 0 })
    const acc = await s.api.get(`/accounts/${s.accountId}`)
    expect(acc.body).toMatchObject({ plan: 'trial' })
    const log = await master.get(`/admin/actions?action=customer.plan&target=${usr}`)
    expect(log.body.data[0]).toMatchObject({
      action: 'customer.plan',
      target: usr,
      params: { plan: 'trial', plan_expires_at: until, plan_limit: 0 },
      request_id: expect.any(String),
    })
  })

  it('suspends a customer: its keys get 403 account_suspended at once; resumed, they work at once', async () => {
    verifies('admin.customers.status')
    const usr = s.userId
    expectError(await master.patch(`/admin/customers/${usr}/status`, {}), 400, 'empty_update')
    expectError(
      await master.patch(`/admin/customers/${usr}/status`, { status: 'suspended' }),
      400,
      'validation_error',
      'reason',
    )
    expectError(
      await master.patch(`/admin/customers/${usr}/status`, { status: 'trial', reason: 'x' }),
      400,
      'validation_error',
      'status',
    )
    expect((await s.api.get(`/accounts/${s.accountId}`)).status).toBe(200)
    const sus = await master.patch(`/admin/customers/${usr}/status`, { status: 'suspended', reason: 'Unpaid invoice' })
    expect(sus.status, sus.text).toBe(200)
    expect(sus.body).toMatchObject({ status: 'suspended', subscription_status: 'suspended' })
    // The very next request of the account's key is refused, on reads and writes alike.
    expectError(await s.api.get(`/accounts/${s.accountId}`), 403, 'account_suspended')
    expectError(await s.api.get(`/accounts/${s.accountId}/agents`), 403, 'account_suspended')
    expectError(await s.api.post('/conversations', { agent_id: 'agt_1' }), 403, 'account_suspended')
    // Another customer is untouched.
    expect((await t.api.get(`/accounts/${t.accountId}`)).status).toBe(200)
    expect((await master.get(`/admin/customers?q=${encodeURIComponent(s.email)}&status=suspended`)).body.data).toEqual([
      expect.objectContaining({ user_id: usr, status: 'suspended' }),
    ])
    const res = await master.patch(`/admin/customers/${usr}/status`, { status: 'active', reason: 'Paid' })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ status: 'active' })
    const again = await s.api.get(`/accounts/${s.accountId}`)
    expect(again.status, again.text).toBe(200)
    expect(again.body.status).not.toBe('suspended')
    const log = await master.get(`/admin/actions?action=customer.status&target=${usr}`)
    expect(log.body.data.map((a: any) => a.params)).toEqual([
      { status: 'active', reason: 'Paid' },
      { status: 'suspended', reason: 'Unpaid invoice' },
    ])
  })

  it('issues a one-time login link that opens a dashboard session for the customer', async () => {
    verifies('admin.customers.login-links')
    const r = await master.post(`/admin/customers/${s.userId}/login-links`)
    expect(r.status, r.text).toBe(201)
    expect(r.body.token).toMatch(/^svc_lnk_/)
    expect(r.body.url.endsWith(`/api/auth/login-link?token=${r.body.token}`)).toBe(true)
    const redeem = () =>
      fetch(`${origin}/api/auth/login-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: r.body.token }),
      })
    const first = await redeem()
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({ user_id: s.userId, account_id: s.accountId })
    expect((await redeem()).status).toBe(401)
    // The action log has the action, never the token.
    const log = await master.get(`/admin/actions?action=customer.login_link&target=${s.userId}`)
    expect(log.body.data).toHaveLength(1)
    expect(JSON.stringify(log.body.data)).not.toContain(r.body.token)
  })

  it('validates credits and adjustments', async () => {
    verifies('admin.customers.wallet-ledger')
    const path = `/admin/customers/${s.userId}/wallet/credits`
    expectError(await master.post(path, { amount: 0, reason: 'x' }), 400, 'validation_error', 'amount')
    expectError(await master.post(path, { amount: -5, reason: 'x' }), 400, 'validation_error', 'amount')
    expectError(
      await master.post(path, { amount: 0, reason: 'x', kind: 'adjustment' }),
      400,
      'validation_error',
      'amount',
    )
    expectError(await master.post(path, { amount: 1.00001, reason: 'x' }), 400, 'validation_error', 'amount')
    expectError(await master.post(path, { amount: '5', reason: 'x' }), 400, 'validation_error', 'amount')
    expectError(await master.post(path, { amount: 5 }), 400, 'validation_error', 'reason')
    expectError(await master.post(path, { amount: 5, reason: ' ' }), 400, 'validation_error', 'reason')
    expectError(await master.post(path, { amount: 5, reason: 'x', kind: 'debit' }), 400, 'validation_error', 'kind')
    expectError(await master.post(path, { amount: 5, reason: 'x', extra: 1 }), 400, 'unsupported_field', 'extra')
    expect(await wallet(s.userId)).toEqual([])
    expectError(await master.get(`/admin/customers/${s.userId}/wallet?limit=0`), 400, 'invalid_limit')
  })

  it('keeps the wallet as a ledger: after chats and a call over the plan limit, the balance equals its entries', async () => {
    verifies('admin.customers.wallet-ledger')
    const usr = t.userId
    const credit = await master.post(`/admin/customers/${usr}/wallet/credits`, { amount: 5, reason: 'Top-up #1' })
    expect(credit.status, credit.text).toBe(201)
    expect(credit.body).toMatchObject({
      entry_id: expect.stringMatching(/^wal_\d+$/),
      amount: 5,
      currency_code: 'USD',
      kind: 'credit',
      reason: 'Top-up #1',
      balance_after: 5,
    })
    const adj = await master.post(`/admin/customers/${usr}/wallet/credits`, {
      amount: -0.25,
      reason: 'Goodwill correction',
      kind: 'adjustment',
    })
    expect(adj.status, adj.text).toBe(201)
    expect(adj.body).toMatchObject({ kind: 'adjustment', amount: -0.25, balance_after: 4.75 })
    // A paid plan whose limit is 0: every cent of usage is charged to the wallet.
    const plan = await master.patch(`/admin/customers/${usr}/plan`, { plan: 'starter', plan_limit: 0 })
    expect(plan.status, plan.text).toBe(200)

    const spentBefore = (await balance(t)).monthly_spending
    await chat(['When do you open?', 'How much is a grevillea seedling?'])
    await chat(['Do you deliver to Perth?'])
    // A read in the middle settles what was spent so far; later reads settle only the rest.
    const mid = await expectLedgerEqualsBalance(t)
    expect(mid.entries.some((e) => e.kind === 'debit')).toBe(true)
    const call = await t.api.post('/simulator/inbound-calls', {
      to: phone,
      from: '+14155550199',
      utterances: ['What time do you open every day?', 'How much is a grevillea seedling?'],
    })
    expect(call.status, call.text).toBe(202)
    await until(
      `call ${call.body.conversation_id} to complete`,
      async () => {
        const r = await t.api.get(`/conversations/${call.body.conversation_id}`)
        return r.body.status === 'completed' ? r.body : null
      },
      60_000,
    )
    await chat(['What plants do you sell?', 'Thanks, that is all.'])
    await master.post(`/admin/customers/${usr}/wallet/credits`, { amount: 2, reason: 'Top-up #2' })

    const { b, entries } = await expectLedgerEqualsBalance(t)
    const debits = entries.filter((e) => e.kind === 'debit')
    expect(debits.length).toBeGreaterThanOrEqual(2)
    for (const d of debits) expect(d.amount).toBeLessThan(0)
    expect(entries.filter((e) => e.kind === 'credit').map((e) => e.reason)).toEqual(['Top-up #2', 'Top-up #1'])
    expect(entries.filter((e) => e.kind === 'adjustment')).toHaveLength(1)
    // The debits are the month's spending above the limit (0), all of it spent since this test began
    // plus whatever the account spent before (building, the overview test's chat).
    expect(b.monthly_spending).toBeGreaterThan(spentBefore)
    expect(round4(-debits.reduce((n, d) => n + d.amount, 0))).toBe(round4(b.monthly_spending))
    expect(b.wallet_balance).toBeCloseTo(5 - 0.25 + 2 - round4(b.monthly_spending), 4)
    // Settling again adds nothing: reads are idempotent.
    expect(await wallet(usr)).toEqual(entries)
    const overview = await master.get(`/admin/customers/${usr}`)
    expect(overview.body.wallet.balance).toBe(b.wallet_balance)
    expect(overview.body.wallet.recent_entries).toEqual(entries.slice(0, 5))
    // The ledger pages newest first.
    const p1 = await master.get(`/admin/customers/${usr}/wallet?limit=2`)
    const p2 = await master.get(
      `/admin/customers/${usr}/wallet?limit=2&cursor=${encodeURIComponent(p1.body.pagination.next_cursor)}`,
    )
    expect([...p1.body.data, ...p2.body.data]).toEqual(entries.slice(0, 4))
  }, 180_000)

  it('a top-up clears a 402 on the next request', async () => {
    verifies('admin.customers.wallet-topup')
    const usr = t.userId
    const { b } = await expectLedgerEqualsBalance(t)
    // Empty the wallet with an adjustment: spending is over the limit (0) and the wallet is 0, so 402.
    const zero = await master.post(`/admin/customers/${usr}/wallet/credits`, {
      amount: -b.wallet_balance,
      reason: 'Write-off',
      kind: 'adjustment',
    })
    expect(zero.status, zero.text).toBe(201)
    expect(zero.body.balance_after).toBe(0)
    expectError(await t.api.post('/conversations', { agent_id: agentId }), 402, 'payment_required')
    expectError(await t.api.post('/conversations', { agent_id: agentId }), 402, 'payment_required')
    const top = await master.post(`/admin/customers/${usr}/wallet/credits`, { amount: 1, reason: 'Top-up #3' })
    expect(top.status, top.text).toBe(201)
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status, c.text).toBe(201)
    await expectLedgerEqualsBalance(t)
    const log = await master.get(`/admin/actions?action=customer.wallet.credit&target=${usr}`)
    expect(log.body.data[0]).toMatchObject({ params: { amount: 1, reason: 'Top-up #3' } })
  }, 60_000)
  it('serialises concurrent credits and settlements on the row lock: no lost entry, no double debit', async () => {
    verifies('admin.customers.wallet-ledger')
    const usr = t.userId
    const before = await expectLedgerEqualsBalance(t)
    await chat(['Which plants need little water?'])
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        master.post(`/admin/customers/${usr}/wallet/credits`, { amount: 0.1, reason: `Parallel ${i}` }),
      ),
      ...Array.from({ length: 4 }, () => master.get(`/admin/customers/${usr}/wallet`)),
      ...Array.from({ length: 2 }, () => t.api.get(`/accounts/${t.accountId}/balance`)),
    ])
    for (const r of results) expect([200, 201], r.text).toContain(r.status)
    const { b, entries } = await expectLedgerEqualsBalance(t)
    expect(entries.filter((e) => e.reason.startsWith('Parallel '))).toHaveLength(6)
    const debited = -entries.filter((e) => e.kind === 'debit').reduce((n, e) => n + e.amount, 0)
    expect(round4(debited)).toBe(round4(b.monthly_spending))
    expect(b.wallet_balance).toBeCloseTo(
      before.b.wallet_balance + 0.6 - (round4(b.monthly_spending) - round4(before.b.monthly_spending)),
      4,
    )
  }, 60_000)
})
