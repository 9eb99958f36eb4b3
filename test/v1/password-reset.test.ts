// The password-reset flow over HTTP (decisions "Password reset"): POST /api/auth/password-reset mails a
// one-time link, POST /api/auth/password-reset/confirm spends it, and PATCH /users/{usr} sets a password
// (the master key, or a partner for its members). A server of its own mails through SVC_MAIL=smtp to a
// receiver started here, so the link is read from the delivered message; the stored copy withholds it.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { passwordResets, mailOutbox } from '~/db/schema'
import { createApi, expectError, uniqueEmail, type Api, type ApiResponse } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from '../helpers/smtp'
import { createTenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

// Every user creation, login and password change runs scrypt N=2^17 (128 MiB, a large fraction of a second).
vi.setConfig({ testTimeout: 180_000 })

let smtp: SmtpReceiver
let server: TestServer
let env: Record<string, string>
let master: Api
let dash: Api

beforeAll(async () => {
  smtp = await startSmtpReceiver()
  env = { SVC_MAIL: 'smtp', SMTP_URL: smtp.url, SVC_RATE_LIMITS: 'read=100000,write=100000' }
  server = await startServer({ env })
  master = createApi(server.base, server.masterKey)
  dash = createApi(server.origin)
}, 90_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
  await smtp?.close()
})

/** Each test asks from addresses of its own: the per-IP limit is 20 requests an hour. */
let ips = 0
const nextIp = () => `203.0.113.${++ips}`
const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...extra } })

interface TestUser {
  user_id: string
  account_id: string
  email: string
  password: string
}

async function newUser(tag: string): Promise<TestUser> {
  const email = uniqueEmail(tag)
  const password = `pw-${tag}-correct-horse`
  const r = await master.post('/users', { email, password })
  expect(r.status, r.text).toBe(201)
  return { user_id: r.body.user_id, account_id: r.body.account_id, email, password }
}

const login = (email: string, password: string, ip: string) =>
  dash.post('/api/auth/login', { email, password }, from(ip))

async function sessionOf(u: TestUser, ip: string): Promise<string> {
  const r = await login(u.email, u.password, ip)
  expect(r.status, r.text).toBe(200)
  return r.body.session_token
}

const askReset = (email: string, ip: string) => dash.post('/api/auth/password-reset', { email }, from(ip))
const confirm = (body: Record<string, unknown>, ip: string) =>
  dash.post('/api/auth/password-reset/confirm', body, from(ip))

/** The text of a delivered message, its quoted-printable soft breaks and `=3D` undone. */
const textOf = (mail: ReceivedMail) =>
  mail.raw
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n')
    .replace(/=\r?\n/g, '')
    .replace(/=3D/g, '=')

const mailsTo = (email: string) => smtp.received.filter((m) => m.to.includes(email.toLowerCase()))

/** Waits for the `n`th reset mail to `email` and answers its link and token. */
async function linkFor(email: string, n = 1) {
  const mail = await until(`reset mail ${n} to ${email}`, async () => mailsTo(email)[n - 1], 20_000, 100)
  const m = /(\S+\/api\/auth\/password-reset\/confirm\?token=(svc_pwr_[A-Za-z0-9_-]{43}))/.exec(textOf(mail))
  expect(m, textOf(mail)).not.toBeNull()
  return { mail, url: m![1], token: m![2] }
}

describe('POST /api/auth/password-reset', () => {
  it('a known address gets 202 and a mail with a one-time link to the dashboard origin; an unknown one the same 202 and no mail', async () => {
    verifies('auth.password-reset')
    const u = await newUser('known')
    const ip = nextIp()
    const nobody = uniqueEmail('nobody')
    // The unknown address first: requests are carried out in arrival order, so once the known address's
    // mail has arrived the unknown one's request is done too.
    const unknown = await askReset(nobody, ip)
    const known = await askReset(u.email.toUpperCase(), ip)
    for (const r of [unknown, known]) {
      expect(r.status, r.text).toBe(202)
      expect(Object.keys(r.body)).toEqual(['meta'])
    }
    const { mail, url, token } = await linkFor(u.email)
    expect(mailsTo(nobody)).toHaveLength(0)
    expect(mail.subject).toBe('Reset your dashboard password')
    expect(url).toBe(`${server.origin}/api/auth/password-reset/confirm?token=${token}`)
    // The mail names no account data.
    for (const secret of [u.user_id, u.account_id, u.password]) expect(mail.raw).not.toContain(secret)

    // Opening the link shows the form and spends nothing.
    const page = await fetch(url, from(ip))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    const html = await page.text()
    expect(html).toContain(`name="token" value="${token}"`)
    expect(html).toContain('action="/api/auth/password-reset/confirm"')
    expect(html).not.toContain('<script')
    expectError(await dash.get('/api/auth/password-reset/confirm?token=svc_pwr_short', from(ip)), 400, 'invalid_token')
    const r = await confirm({ token, password: 'a-new-password-1' }, ip)
    expect(r.status, r.text).toBe(204)
  })

  it('validates its body: a malformed address is invalid_email, none validation_error, another field unsupported_field', async () => {
    verifies('auth.password-reset')
    const ip = nextIp()
    expectError(await askReset('not-an-address', ip), 400, 'invalid_email', 'email')
    expectError(await dash.post('/api/auth/password-reset', {}, from(ip)), 400, 'validation_error', 'email')
    expectError(
      await dash.post('/api/auth/password-reset', { email: uniqueEmail('x'), user_id: 'usr_1' }, from(ip)),
      400,
      'unsupported_field',
      'user_id',
    )
  })

  it('is limited to 5 requests an hour per address (known or not) and 20 per client IP: then 429 with Retry-After', async () => {
    verifies('auth.password-reset')
    const u = await newUser('limited')
    for (const email of [u.email, uniqueEmail('limited-nobody')]) {
      // From a new client IP each time: only the address's budget is spent.
      for (let i = 0; i < 5; i++) expect((await askReset(email, nextIp())).status).toBe(202)
      const over = await askReset(email, nextIp())
      expectError(over, 429, 'rate_limited')
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(60)
    }
    // Five mails reached the user, not six.
    await linkFor(u.email, 5)
    expect(mailsTo(u.email)).toHaveLength(5)

    const ip = nextIp()
    for (let i = 0; i < 20; i++) expect((await askReset(uniqueEmail(`ip-${i}`), ip)).status).toBe(202)
    expectError(await askReset(uniqueEmail('ip-over'), ip), 429, 'rate_limited')
    expect((await askReset(uniqueEmail('ip-other'), nextIp())).status).toBe(202)
  })
})

describe('POST /api/auth/password-reset/confirm', () => {
  it('works once: 204, the new password logs in, the old sessions are gone, a second use is 400 invalid_token; audited', async () => {
    verifies('auth.password-reset')
    const u = await newUser('once')
    const ip = nextIp()
    const sessions = [await sessionOf(u, ip), await sessionOf(u, ip)]
    for (const s of sessions)
      expect((await dash.get('/api/api-keys', from(ip, { cookie: `svc_session=${s}` }))).status).toBe(200)
    const started = new Date().toISOString()
    expect((await askReset(u.email, ip)).status).toBe(202)
    const { token } = await linkFor(u.email)
    const password = 'fresh-password-after-reset'
    const r = await confirm({ token, password }, ip)
    expect(r.status, r.text).toBe(204)
    expect(r.text).toBe('')
    for (const s of sessions)
      expectError(await dash.get('/api/api-keys', from(ip, { cookie: `svc_session=${s}` })), 401, 'invalid_credentials')
    expectError(await login(u.email, u.password, ip), 401, 'invalid_credentials')
    expect((await login(u.email, password, ip)).status).toBe(200)
    const again = await confirm({ token, password: 'yet-another-password' }, ip)
    expectError(again, 400, 'invalid_token', 'token')
    expectError(await confirm({ token: `svc_pwr_${'A'.repeat(43)}`, password }, ip), 400, 'invalid_token')
    // The change is audited under the user's account (no session: credential_type null).
    const rows = await until(
      'the audit row of the reset',
      async () => {
        const a = await master.get(`/audit?account_id=${u.account_id}&from=${encodeURIComponent(started)}&limit=100`)
        expect(a.status, a.text).toBe(200)
        return (a.body.data as any[]).find(
          (x) => x.path === '/api/auth/password-reset/confirm' && x.status_code === 204,
        )
      },
      10_000,
      150,
    )
    expect(rows).toMatchObject({ method: 'POST', credential_type: null })
  })

  it('a newer request replaces the older link; of two concurrent uses of one link exactly one succeeds', async () => {
    verifies('auth.password-reset')
    const u = await newUser('newer')
    const ip = nextIp()
    expect((await askReset(u.email, ip)).status).toBe(202)
    const first = await linkFor(u.email, 1)
    expect((await askReset(u.email, ip)).status).toBe(202)
    const second = await linkFor(u.email, 2)
    expect(second.token).not.toBe(first.token)
    expectError(await confirm({ token: first.token, password: 'older-link-password' }, ip), 400, 'invalid_token')
    const both = await Promise.all([
      confirm({ token: second.token, password: 'racing-password-one' }, ip),
      confirm({ token: second.token, password: 'racing-password-two' }, ip),
    ])
    expect(both.map((r) => r.status).sort()).toEqual([204, 400])
    const won = both[0].status === 204 ? 'racing-password-one' : 'racing-password-two'
    expect((await login(u.email, won, ip)).status).toBe(200)
  })

  it('a password under 12 characters is 400 validation_error (field password) and spends nothing; unknown fields are unsupported_field', async () => {
    verifies('auth.password-reset')
    const u = await newUser('short')
    const ip = nextIp()
    expect((await askReset(u.email, ip)).status).toBe(202)
    const { token } = await linkFor(u.email)
    expectError(await confirm({ token, password: 'elevenchars' }, ip), 400, 'validation_error', 'password')
    expectError(await confirm({ token }, ip), 400, 'validation_error', 'password')
    expectError(await confirm({ token, password: 'x'.repeat(257) }, ip), 400, 'validation_error', 'password')
    expectError(
      await confirm({ token, password: 'long-enough-password', email: u.email }, ip),
      400,
      'unsupported_field',
      'email',
    )
    expect((await confirm({ token, password: 'twelve-chars' }, ip)).status).toBe(204)
    expect((await login(u.email, 'twelve-chars', ip)).status).toBe(200)
  })

  it('the form of the page the link opens sets the password and answers an HTML page', async () => {
    verifies('auth.password-reset')
    const u = await newUser('form')
    const ip = nextIp()
    expect((await askReset(u.email, ip)).status).toBe(202)
    const { token } = await linkFor(u.email)
    const form = new FormData()
    form.set('token', token)
    form.set('password', 'typed-into-the-form')
    const r = await fetch(`${server.origin}/api/auth/password-reset/confirm`, {
      method: 'POST',
      body: form,
      ...from(ip),
    })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('text/html')
    expect(await r.text()).toContain('Your password is changed')
    expect((await login(u.email, 'typed-into-the-form', ip)).status).toBe(200)
    const short = new FormData()
    short.set('token', token)
    short.set('password', 'short')
    const bad = await fetch(`${server.origin}/api/auth/password-reset/confirm`, {
      method: 'POST',
      body: short,
      ...from(ip),
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as any).error).toMatchObject({ code: 'validation_error', field: 'password' })
  })

  it('an expired link is 400 invalid_token; the database holds the token only as its hash, and the stored mail withholds it', async () => {
    verifies('auth.password-reset')
    const u = await newUser('expired')
    const ip = nextIp()
    expect((await askReset(u.email, ip)).status).toBe(202)
    const { token, mail } = await linkFor(u.email)
    const messageId = mail.header('X-Svc-Message-Id')
    // On PGlite only one process may open the data directory: the server stops while the test looks.
    await server.stop('SIGTERM')
    await withDatabase(server.dataDir, async (db) => {
      const rows = await db.db.select().from(passwordResets)
      const mine = rows.find((r) => r.userId === u.user_id)!
      expect(mine.tokenHash).toBe(createHash('sha256').update(token).digest('hex'))
      const secret = token.slice('svc_pwr_'.length)
      expect(JSON.stringify(rows)).not.toContain(secret)
      const stored = (await db.db.select().from(mailOutbox)).find((r) => r.id === messageId)!
      expect(stored).toMatchObject({ accountId: null, provider: 'smtp', status: 'sent' })
      expect(stored.text).toContain('/api/auth/password-reset/confirm?token=[withheld]')
      expect(stored.text).not.toContain(secret)
      await db.db.update(passwordResets).set({ expiresAt: new Date(Date.now() - 1000) })
    })
    server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
    master = createApi(server.base, server.masterKey)
    dash = createApi(server.origin)
    expectError(await confirm({ token, password: 'too-late-password' }, ip), 400, 'invalid_token', 'token')
    expect((await login(u.email, u.password, ip)).status).toBe(200)
  })
})

describe('PATCH /users/{usr} password', () => {
  const patch = (api: Api, usr: string, body: Record<string, unknown>): Promise<ApiResponse> =>
    api.patch(`/users/${usr}`, body)

  it('the master key sets it: the user logs in with it, its sessions and pending reset link end; under 12 characters is refused', async () => {
    verifies('auth.password-reset')
    const u = await newUser('patched')
    const ip = nextIp()
    const session = await sessionOf(u, ip)
    expect((await askReset(u.email, ip)).status).toBe(202)
    const { token } = await linkFor(u.email)
    expectError(await patch(master, u.user_id, { password: 'short-pass' }), 400, 'validation_error', 'password')
    const r = await patch(master, u.user_id, { password: 'set-by-the-operator' })
    expect(r.status, r.text).toBe(200)
    expect(r.body.user_id).toBe(u.user_id)
    expect(r.text).not.toContain('set-by-the-operator')
    expect(r.body).not.toHaveProperty('password')
    expectError(
      await dash.get('/api/api-keys', from(ip, { cookie: `svc_session=${session}` })),
      401,
      'invalid_credentials',
    )
    expectError(await login(u.email, u.password, ip), 401, 'invalid_credentials')
    expect((await login(u.email, 'set-by-the-operator', ip)).status).toBe(200)
    expectError(await confirm({ token, password: 'a-reset-too-late' }, ip), 400, 'invalid_token')
  })

  it('a personal key is refused; a partner key may set only the password, and only of its members', async () => {
    verifies('auth.password-reset')
    const ip = nextIp()
    const plain = await createTenant(master, { scopes: ['accounts:read', 'credentials:manage'] })
    expectError(await patch(plain.api, plain.userId, { password: 'my-own-new-password' }), 403, 'insufficient_scope')

    const partner = await createTenant(master, { scopes: ['partners:manage', 'accounts:read'] })
    const other = await createTenant(master, { scopes: ['partners:manage', 'accounts:read'] })
    const m = await partner.api.post('/partners/members', { email: uniqueEmail('member') })
    expect(m.status, m.text).toBe(201)
    const theirs = await other.api.post('/partners/members', { email: uniqueEmail('theirs') })
    expect(theirs.status, theirs.text).toBe(201)

    const r = await patch(partner.api, m.body.user_id, { password: 'chosen-by-the-partner' })
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({ user_id: m.body.user_id, partner_id: partner.userId })
    expect((await login(m.body.email, 'chosen-by-the-partner', ip)).status).toBe(200)

    expectError(await patch(partner.api, m.body.user_id, { status: 'suspended' }), 403, 'insufficient_scope')
    expectError(
      await patch(partner.api, m.body.user_id, { password: 'chosen-by-the-partner', limits: {} }),
      403,
      'insufficient_scope',
    )
    // Its own user, another partner's member, an ordinary tenant and an unknown id answer alike.
    for (const usr of [partner.userId, theirs.body.user_id, plain.userId, 'usr_999999999'])
      expectError(await patch(partner.api, usr, { password: 'not-yours-to-set' }), 403, 'forbidden_account')
    expect((await login(theirs.body.email, 'not-yours-to-set', ip)).status).toBe(401)
  })
})
