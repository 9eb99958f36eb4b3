// The mixed workload shared by `npm run load` (bench/load.mjs) and the chaos test
// (test/integration/chaos.test.ts): a client that records every request, a pacer per tenant and rate
// class that keeps the load inside SVC_RATE_LIMITS, a site for the builds, a webhook receiver that counts
// deliveries per endpoint and event id, the tenants' set-up and the actors (reads, lists, chat sessions,
// KB uploads, simulated inbound and outbound calls, builds, campaigns). Every write the actors make is
// written down in a ledger (accepted, rejected, or ambiguous when its answer was lost) for
// bench/load-consistency.mjs to check afterwards. Plain ESM so that node runs it without a build step.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** The rate limits (per credential and minute) the load runs under; the pacers use PACE of each. */
export const LOAD_RATE_LIMITS = { read: 3000, write: 1500, chat: 1500, calls: 600, build: 120, metrics: 600 }
export const PACE = 0.8
export const rateLimitsEnv = (limits = LOAD_RATE_LIMITS) =>
  Object.entries(limits)
    .map(([k, v]) => `${k}=${v}`)
    .join(',')
/** Daily quotas high enough for a long run: the load checks that the counters are exact, not that they bind. */
export const LOAD_QUOTAS = 'chat_messages=1000000,kb_documents=1000000,builds=10000,agent_creates=1000'

/** A deterministic PRNG (mulberry32): the chaos test prints its seed and replays it. */
export function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0)

/**
 * Every request: route (method and path template), status (0 when no answer came), latency, start and end.
 * `failure` says why a request has no answer of ours: 'transport' (the connection failed or was reset) or
 * 'proxy' (a 5xx without our error envelope, made by the proxy in front of the instances).
 */
export function createRecorder() {
  const all = []
  return {
    all,
    add(r) {
      all.push(r)
    },
    /** req/s, p50 and p99 per route over [from, to] (ms since epoch). */
    report(from, to) {
      const rows = all.filter((r) => r.t0 >= from && r.t0 <= to)
      const byRoute = new Map()
      for (const r of rows) {
        const e = byRoute.get(r.route) ?? { route: r.route, n: 0, ms: [], s2: 0, s4: 0, s429: 0, s5: 0, lost: 0 }
        e.n++
        e.ms.push(r.ms)
        if (r.failure) e.lost++
        else if (r.status >= 500) e.s5++
        else if (r.status === 429) e.s429++
        else if (r.status >= 400) e.s4++
        else e.s2++
        byRoute.set(r.route, e)
      }
      const seconds = Math.max(1, (to - from) / 1000)
      const routes = [...byRoute.values()]
        .sort((a, b) => b.n - a.n)
        .map((e) => {
          const s = e.ms.sort((a, b) => a - b)
          return {
            route: e.route,
            requests: e.n,
            per_s: +(e.n / seconds).toFixed(2),
            p50_ms: Math.round(quantile(s, 0.5)),
            p99_ms: Math.round(quantile(s, 0.99)),
            '2xx': e.s2,
            '4xx': e.s4,
            429: e.s429,
            '5xx': e.s5,
            lost: e.lost,
          }
        })
      return {
        seconds: +seconds.toFixed(1),
        requests: rows.length,
        per_s: +(rows.length / seconds).toFixed(1),
        status_5xx: rows.filter((r) => !r.failure && r.status >= 500).length,
        status_429: rows.filter((r) => r.status === 429).length,
        lost: rows.filter((r) => r.failure).length,
        routes,
      }
    },
  }
}

/** Fetch with a bearer key that never throws: a missing answer comes back as status 0 with `failure`. */
export function createClient(base, recorder, { ip = '198.18.200.1', timeoutMs = 60_000 } = {}) {
  return async function request(method, path, { key, body, form, headers = {}, route, idempotencyKey } = {}) {
    const h = { 'x-forwarded-for': ip, ...headers }
    if (key) h.authorization = `Bearer ${key}`
    if (idempotencyKey) h['idempotency-key'] = idempotencyKey
    let payload
    if (form) payload = form
    else if (body !== undefined) {
      payload = JSON.stringify(body)
      h['content-type'] = 'application/json'
    }
    const t0 = Date.now()
    let status = 0
    let text = ''
    let json = null
    let failure = null
    let error = null
    let resHeaders = null
    try {
      const res = await fetch(base + path, {
        method,
        headers: h,
        body: payload,
        signal: AbortSignal.timeout(timeoutMs),
      })
      status = res.status
      resHeaders = res.headers
      text = await res.text()
      try {
        json = JSON.parse(text)
      } catch {}
      // The proxy's own answers (scripts/cluster.mjs): 502 bad_gateway when the instance died with the
      // request, no_instance when none is up. Ours always carry the envelope's request id.
      if (status === 502 && !json?.error?.request_id && ['bad_gateway', 'no_instance'].includes(json?.error?.code))
        failure = 'proxy'
    } catch (e) {
      failure = 'transport'
      error = String(e?.cause?.code ?? e?.name ?? e)
    }
    const t1 = Date.now()
    const r = {
      route: route ?? `${method} ${path.split('?')[0]}`,
      method,
      path,
      status,
      ms: t1 - t0,
      t0,
      t1,
      failure,
      error,
    }
    recorder?.add(r)
    return { ...r, body: json, text, headers: resHeaders }
  }
}

/** The site the builds crawl: three short pages about an invented business. */
export async function startSite() {
  const page = (title, body) =>
    `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main>${body}</main></body></html>`
  const pages = {
    '/': page(
      'Wombat Wheels',
      '<h1>Wombat Wheels</h1><p>Wombat Wheels repairs bicycles in Hobart. A puncture repair costs twelve dollars.</p><p><a href="/service">Service</a> <a href="/hours">Hours</a></p>',
    ),
    '/service': page(
      'Service',
      '<h1>Full service</h1><p>A full service costs eighty-nine dollars and takes two days. We check brakes, gears and wheels.</p>',
    ),
    '/hours': page('Hours', '<h1>Opening hours</h1><p>We open Tuesday to Sunday from nine in the morning.</p>'),
  }
  const server = createServer((req, res) => {
    const body = pages[(req.url ?? '/').split('?')[0]]
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' })
    res.end(body ?? 'not found')
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => server.close(() => r())),
  }
}

/**
 * The webhook receiver: paths /<tenant>/<endpoint>. It counts deliveries per path and event id and keeps
 * each event's type and subject (conversation or call id). Endpoint 2 of each tenant answers 503 to the
 * first attempt of every fourth event, so retries are part of the fan-out.
 */
export async function startReceiver() {
  const byPath = new Map()
  const events = new Map()
  const attempts = new Set()
  let total = 0
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]
      let ev = null
      try {
        ev = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {}
      if (!ev?.id) {
        res.writeHead(400).end()
        return
      }
      const seen = byPath.get(path) ?? new Map()
      byPath.set(path, seen)
      const attempt = `${path} ${ev.id}`
      const first = !attempts.has(attempt)
      attempts.add(attempt)
      if (path.endsWith('/2') && first && ev.id.charCodeAt(ev.id.length - 1) % 4 === 0) {
        // Not counted as a delivery: the sender sees a failure and retries.
        res.writeHead(503).end()
        return
      }
      seen.set(ev.id, (seen.get(ev.id) ?? 0) + 1)
      total++
      if (!events.has(ev.id)) events.set(ev.id, { type: ev.type, account: ev.account_id, subject: subjectOf(ev) })
      res.writeHead(200).end('ok')
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    byPath,
    events,
    get total() {
      return total
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** The resource an event is about: the call for call.*, else the conversation. */
export function subjectOf(ev) {
  const d = ev.data ?? {}
  return ev.type.startsWith('call.') ? d.call_id : (d.conversation_id ?? d.id)
}

export const WEBHOOK_EVENTS = [
  'conversation.started',
  'conversation.ended',
  'call.completed',
  'call.no_answer',
  'call.failed',
]
const ENDPOINTS_PER_TENANT = 3

/** Throws unless 2xx: set-up steps retry a lost answer themselves (with the same Idempotency-Key). */
async function must(request, method, path, opts, what) {
  const idempotencyKey = method === 'GET' ? undefined : (opts.idempotencyKey ?? randomUUID())
  for (let i = 0; ; i++) {
    const r = await request(method, path, { ...opts, idempotencyKey, route: `setup ${what}` })
    if (r.status >= 200 && r.status < 300) return r.body
    const retry = r.failure || r.status === 409 || r.status === 503
    if (!retry || i >= 40) throw new Error(`${what}: ${r.status} ${r.error ?? r.text.slice(0, 300)}`)
    await sleep(1000)
  }
}

async function untilDone(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(500)
  }
}

let numberSeq = 0
/** A fresh US number: +1 646 5xx xxxx from the process and a counter (the simulator answers it). */
export const freshPhone = (salt = 0) => {
  const n = (process.pid * 7919 + salt * 104_729 + ++numberSeq * 13) % 10_000_000
  const s = String(n).padStart(7, '0')
  // …0000, …9999, …8888 and …7777 are the simulator's special lines; a caller must be answered.
  const line = /(0000|9999|8888|7777)$/.test(s) ? `${s.slice(0, 3)}1234` : s
  return `+1646${5 + (Number(line[0]) % 4)}${line.slice(1, 3)}${line.slice(3)}`
}

/** A build from the site, polled to its end; answers the agent id. */
async function buildAgent(request, t, site, agentType) {
  const voices = await must(request, 'GET', '/voices', { key: t.key }, 'voices')
  const b = await must(
    request,
    'POST',
    `/accounts/${t.accountId}/agents/build`,
    {
      key: t.key,
      body: {
        website_url: `${site.origin}/`,
        voice_id: voices.data[0].voice_id,
        language: 'en',
        agent_type: agentType,
      },
    },
    'build',
  )
  await untilDone(
    `the ${agentType} build of ${b.agent_id}`,
    async () => {
      const r = await request('GET', `/agents/${b.agent_id}/build`, { key: t.key, route: 'setup build status' })
      if (r.body?.status === 'failed') throw new Error(`build failed: ${r.text}`)
      return r.body?.status === 'succeeded'
    },
    180_000,
  )
  return b.agent_id
}

/**
 * `count` tenants, each with a key of every scope, a chat agent and a phone agent built from the site, a
 * number on the phone agent, a campaign profile and three webhook endpoints (subscribed before any work,
 * so every event of the run is theirs).
 */
/** The UTC day (YYYY-MM-DD): the daily quotas count from its midnight. */
export const utcDay = () => new Date().toISOString().slice(0, 10)

export async function setupTenants({ request, masterKey, count, site, receiver, tag = 'load' }) {
  const tenants = []
  // The quota check compares today's counters with all the work since set-up: only within one UTC day.
  const setUpOn = utcDay()
  for (let i = 0; i < count; i++) {
    const email = `${tag}-${process.pid}-${Date.now().toString(36)}-${i}@example.com`
    const user = await must(request, 'POST', '/users', { key: masterKey, body: { email, plan: 'starter' } }, 'user')
    await must(
      request,
      'PATCH',
      `/users/${user.user_id}`,
      { key: masterKey, body: { limits: { max_calls_per_day: 1_000_000, max_builds_per_day: 10_000 } } },
      'limits',
    )
    const cred = await must(
      request,
      'POST',
      `/users/${user.user_id}/credentials`,
      {
        key: masterKey,
        body: {
          name: 'load',
          scopes: [
            'accounts:read',
            'usage:read',
            'agents:read',
            'agents:write',
            'kb:read',
            'kb:write',
            'conversations:read',
            'conversations:write',
            'webhooks:manage',
            'outbound:read',
            'outbound:write',
          ],
        },
      },
      'credential',
    )
    const t = { index: i, userId: user.user_id, accountId: user.account_id, key: cred.secret, endpoints: [] }
    for (let e = 0; e < ENDPOINTS_PER_TENANT; e++) {
      const ep = await must(
        request,
        'POST',
        '/webhooks/endpoints',
        { key: t.key, body: { url: `${receiver.origin}/${i}/${e}`, events: WEBHOOK_EVENTS } },
        'endpoint',
      )
      t.endpoints.push({ id: ep.endpoint_id ?? ep.id, path: `/${i}/${e}` })
    }
    t.chatAgent = await buildAgent(request, t, site, 'chat')
    t.phoneAgent = await buildAgent(request, t, site, 'phone')
    t.number = freshPhone(1000 + i)
    await must(
      request,
      'POST',
      '/phone-numbers',
      { key: t.key, body: { e164: t.number, agent_id: t.phoneAgent } },
      'number',
    )
    const p = await must(
      request,
      'POST',
      `/agents/${t.phoneAgent}/profiles`,
      {
        key: t.key,
        body: {
          name: 'Reminders',
          role: 'the service reminder assistant of Wombat Wheels calling {{first_name}}',
          greeting: 'Hi {{first_name}}, this is Wombat Wheels.',
        },
      },
      'profile',
    )
    t.profile = p.profile_id
    t.setUpOn = setUpOn
    tenants.push(t)
  }
  return tenants
}

/** What the actors did, per tenant: the consistency checks read it. */
export function createLedger(tenants) {
  const per = (t) => ({
    tenant: t,
    conversations: new Map(),
    lostCreates: [],
    docs: new Map(),
    lostDocs: [],
    calls: new Map(),
    inbound: new Map(),
    builds: [],
    campaigns: new Map(),
  })
  return { tenants: tenants.map(per), unexpected: [], abandoned: [], suspension: null }
}

/**
 * One rate-limit pacer per tenant and class: requests of a class leave at most PACE × limit a minute,
 * evenly spaced, so a run at full speed stays inside SVC_RATE_LIMITS.
 */
function createPacers(limits) {
  const next = new Map()
  return async (tenant, cls) => {
    const interval = 60_000 / (limits[cls] * PACE)
    const k = `${tenant.index}:${cls}`
    const now = Date.now()
    const at = Math.max(now, next.get(k) ?? 0)
    next.set(k, at + interval)
    if (at > now) await sleep(at - now)
  }
}

/** Runs `fn` when fewer than `n` run for the key (a tenant's phone lines); answers false, without waiting, when not. */
function createGate(n) {
  const busy = new Map()
  return async (key, fn) => {
    if ((busy.get(key) ?? 0) >= n) return false
    busy.set(key, (busy.get(key) ?? 0) + 1)
    try {
      await fn()
      return true
    } finally {
      busy.set(key, busy.get(key) - 1)
    }
  }
}

const CLASS_OF = { GET: 'read' }

/**
 * The actors. `stopAt` ends the run; `weights` picks the mix (op name → weight). A write whose answer is
 * lost is retried with the same Idempotency-Key (the chat message with its idempotency_key) for a bounded
 * time, the way a careful client would; whatever stays unanswered is recorded as ambiguous.
 */
export function createActors({
  request,
  ledger,
  limits = LOAD_RATE_LIMITS,
  random = Math.random,
  retryMs = 120_000,
  inbound = true,
}) {
  const pace = createPacers(limits)
  const lines = createGate(2)
  const pick = (xs) => xs[Math.floor(random() * xs.length)]
  let seq = 0

  const call = async (t, method, path, opts = {}) => {
    await pace(t, opts.cls ?? CLASS_OF[method] ?? 'write')
    const r = await request(method, path, { key: t.key, ...opts })
    r.suspended = noteSuspension(ledger, t, r)
    // A client told that its account is suspended does not hammer the API with the next request at once.
    if (r.body?.error?.code === 'account_suspended') await sleep(1000)
    return r
  }
  const unexpected = (what, r) => {
    // The suspended tenant's own requests refused during its suspension are the expected answer, not a failure.
    if (r.suspended) return
    ledger.unexpected.push({
      what,
      status: r.status,
      failure: r.failure,
      t0: r.t0,
      t1: r.t1,
      text: r.text?.slice(0, 300),
    })
  }
  const ok = (r) => r.status >= 200 && r.status < 300

  /** A write retried while its answer is lost or its key still in use; answers the last attempt and whether it is ambiguous. */
  async function write(t, method, path, opts, retryable = () => false) {
    // A message carries its own idempotency_key, which the turn's write stores atomically; the header's
    // key would be claimed apart from the turn (decisions "Load and crashes", open finding).
    const idempotencyKey = opts.cls === 'chat' ? undefined : (opts.idempotencyKey ?? randomUUID())
    const deadline = Date.now() + retryMs
    let lost = false
    for (;;) {
      const r = await call(t, method, path, { ...opts, idempotencyKey })
      const again =
        r.failure ||
        r.body?.error?.code === 'idempotency_key_in_use' ||
        (lost && r.status === 409 && retryable(r)) ||
        retryable(r)
      if (r.failure) lost = true
      if (!again || Date.now() > deadline) return { r, lost, ambiguous: !!r.failure || (lost && !ok(r)) }
      await sleep(1000 + random() * 1000)
    }
  }

  const L = (t) => ledger.tenants[t.index]

  const ops = {
    async read(t) {
      const l = L(t)
      const convs = [...l.conversations.keys()]
      const calls = [...l.calls.keys()]
      const choice = Math.floor(random() * 4)
      let r
      if (choice === 0 && convs.length)
        r = await call(t, 'GET', `/conversations/${pick(convs)}`, { route: 'GET /conversations/{conv}' })
      else if (choice === 1 && calls.length)
        r = await call(t, 'GET', `/calls/${pick(calls)}`, { route: 'GET /calls/{call}' })
      else if (choice === 2) r = await call(t, 'GET', `/agents/${t.chatAgent}`, { route: 'GET /agents/{agt}' })
      else r = await call(t, 'GET', `/accounts/${t.accountId}/limits`, { route: 'GET /accounts/{acc}/limits' })
      if (!ok(r) && !r.failure) unexpected('read', r)
    },
    async list(t) {
      const paths = [
        ['/conversations?limit=20', 'GET /conversations'],
        ['/calls?limit=20', 'GET /calls'],
        [`/agents/${t.chatAgent}/kb/documents?limit=20`, 'GET /agents/{agt}/kb/documents'],
        ['/webhooks/deliveries?limit=20', 'GET /webhooks/deliveries'],
      ]
      const [path, route] = pick(paths)
      const r = await call(t, 'GET', path, { route })
      if (!ok(r) && !r.failure) unexpected('list', r)
    },
    /** A chat session: create, two to four messages (each with a unique client message id), end. */
    async chat(t) {
      const l = L(t)
      const ext = `ext-${process.pid}-${t.index}-${++seq}-${randomUUID().slice(0, 8)}`
      const created = await write(t, 'POST', '/conversations', {
        route: 'POST /conversations',
        body: { agent_id: t.chatAgent, external_session_id: ext },
      })
      if (!ok(created.r)) {
        if (created.ambiguous) l.lostCreates.push(ext)
        else unexpected('conversation create', created.r)
        return
      }
      const conv = { id: created.r.body.conversation_id, ext, messages: [], ended: false, endAmbiguous: false }
      l.conversations.set(conv.id, conv)
      const n = 2 + Math.floor(random() * 3)
      for (let i = 0; i < n; i++) {
        const mid = `m-${conv.id}-${i}-${randomUUID().slice(0, 8)}`
        const text = `[${mid}] ${pick(['How much is a puncture repair?', 'When do you open on Sunday?', 'How long does a full service take?', 'Do you check the brakes in a service?'])}`
        const m = { mid, text, state: 'pending' }
        conv.messages.push(m)
        const sent = await write(
          t,
          'POST',
          `/conversations/${conv.id}/messages`,
          { route: 'POST /conversations/{conv}/messages', cls: 'chat', body: { text, idempotency_key: mid } },
          // A turn cut off with its instance holds the conversation until its claim lapses (60 s).
          (r) => r.body?.error?.code === 'turn_in_progress',
        )
        if (ok(sent.r)) m.state = 'accepted'
        else if (sent.r.suspended) {
          // Refused by the tenant's suspension before anything was written: never stored, unless an earlier
          // attempt's answer was lost (then at most once). The session stops here, as a client's would.
          m.state = sent.ambiguous ? 'ambiguous' : 'rejected'
          return
        } else if (sent.ambiguous || sent.r.body?.error?.code === 'turn_in_progress') {
          m.state = 'ambiguous'
          ledger.abandoned.push({
            what: 'message',
            conv: conv.id,
            mid,
            status: sent.r.status,
            code: sent.r.body?.error?.code,
          })
          return
        } else {
          m.state = 'rejected'
          unexpected('message', sent.r)
          return
        }
      }
      const end = await write(t, 'POST', `/conversations/${conv.id}/end`, { route: 'POST /conversations/{conv}/end' })
      if (ok(end.r)) conv.ended = true
      else if (end.ambiguous) conv.endAmbiguous = true
      else unexpected('end', end.r)
    },
    /** A small Markdown or text document, alternately as a multipart upload and as JSON text. */
    async kb(t) {
      const l = L(t)
      const title = `Note ${t.index}-${++seq}-${randomUUID().slice(0, 8)}`
      const text = `# ${title}\n\nWombat Wheels note ${seq}: the ${pick(['tyre', 'chain', 'brake', 'gear'])} service takes ${1 + (seq % 5)} days and costs ${10 + (seq % 40)} dollars.\n`
      const multipart = seq % 2 === 0
      const opts = { route: 'POST /agents/{agt}/kb/documents' }
      if (multipart) {
        const form = new FormData()
        form.set('file', new Blob([text], { type: 'text/markdown' }), `${title}.md`)
        form.set('title', title)
        opts.form = form
      } else opts.body = { title, text }
      // Both agents in turn: each has its plan's cap of 500 files, which a long run would reach with one.
      const agent = seq % 4 < 2 ? t.chatAgent : t.phoneAgent
      const res = await write(t, 'POST', `/agents/${agent}/kb/documents`, opts)
      if (ok(res.r)) l.docs.set(res.r.body.doc_id, { title, agent })
      else if (res.ambiguous) l.lostDocs.push(title)
      else unexpected('kb upload', res.r)
    },
    /** A simulated call, inbound (the simulator route) or outbound (POST /calls), on one of two lines. */
    async calls(t) {
      const l = L(t)
      // Both lines busy: a read instead, so that no user waits for a line.
      const placed = await lines(t.index, async () => {
        if (inbound && random() < 0.5) {
          const res = await write(t, 'POST', '/simulator/inbound-calls', {
            route: 'POST /simulator/inbound-calls',
            body: { to: t.number, from: freshPhone(t.index), utterances: ['When do you open on Sunday?'] },
          })
          if (ok(res.r)) l.inbound.set(res.r.body.conversation_id, { status: res.r.body.status })
          else if (!res.ambiguous) unexpected('inbound call', res.r)
          if (ok(res.r))
            await settle(t, `/conversations/${res.r.body.conversation_id}`, (b) => b.status !== 'in_progress')
        } else {
          const res = await write(t, 'POST', '/calls', {
            route: 'POST /calls',
            cls: 'calls',
            body: { agent_id: t.phoneAgent, to: freshPhone(t.index), role: 'the Wombat Wheels assistant' },
          })
          if (ok(res.r)) l.calls.set(res.r.body.call_id, { campaign: null })
          else if (!res.ambiguous) unexpected('outbound call', res.r)
          if (ok(res.r)) await settle(t, `/calls/${res.r.body.call_id}`, (b) => !!b.ended_at)
        }
      })
      if (!placed) await ops.read(t)
    },
    /** A re-run of the chat agent's build (one at a time per account: 409 while one runs is expected). */
    async build(t) {
      const l = L(t)
      const res = await write(t, 'POST', `/agents/${t.chatAgent}/build`, {
        route: 'POST /agents/{agt}/build',
        cls: 'build',
        body: { from_step: 'crawl' },
      })
      if (ok(res.r)) l.builds.push({ agent: t.chatAgent, build: res.r.body.build_id })
      else if (res.r.body?.error?.code === 'build_in_progress' || res.ambiguous) return
      else unexpected('build', res.r)
    },
    /** A campaign of six contacts (one never answers) at max_concurrent 2, started and left to run. */
    async campaign(t) {
      const l = L(t)
      const list = await write(t, 'POST', `/agents/${t.phoneAgent}/lists`, {
        route: 'POST /agents/{agt}/lists',
        body: { name: `List ${++seq}` },
      })
      if (!ok(list.r)) return list.ambiguous ? undefined : unexpected('list create', list.r)
      const contacts = Array.from({ length: 6 }, (_, i) => ({
        phone: i === 0 ? `+1646${500 + (seq % 400)}0000` : freshPhone(t.index),
        first_name: `C${i}`,
      }))
      const imp = await write(t, 'POST', `/lists/${list.r.body.list_id}/import`, {
        route: 'POST /lists/{lst}/import',
        body: { contacts },
      })
      if (!ok(imp.r)) return imp.ambiguous ? undefined : unexpected('list import', imp.r)
      const c = await write(t, 'POST', '/campaigns', {
        route: 'POST /campaigns',
        body: {
          agent_id: t.phoneAgent,
          profile_id: t.profile,
          list_id: list.r.body.list_id,
          name: `Reminders ${seq}`,
          schedule: {
            timezone: 'UTC',
            days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
            start: '00:00',
            end: '24:00',
          },
          max_concurrent: 2,
          max_attempts: 2,
          retry_delay_minutes: 0.02,
        },
      })
      if (!ok(c.r)) return c.ambiguous ? undefined : unexpected('campaign create', c.r)
      const id = c.r.body.campaign_id
      l.campaigns.set(id, { started: false, contacts: contacts.length })
      const s = await write(t, 'POST', `/campaigns/${id}/start`, { route: 'POST /campaigns/{cmp}/start' })
      // A start replayed after a lost answer may find it running already (409 invalid_state): it started.
      if (ok(s.r) || (s.lost && s.r.body?.error?.code === 'invalid_state')) l.campaigns.get(id).started = true
      else if (!s.ambiguous) unexpected('campaign start', s.r)
    },
  }

  /** Polls a resource until `done` (bounded); the actor's line stays taken meanwhile. */
  async function settle(t, path, done) {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const r = await call(t, 'GET', path, {
        route: path.startsWith('/calls') ? 'GET /calls/{call}' : 'GET /conversations/{conv}',
      })
      if (ok(r) && done(r.body)) return
      await sleep(500)
    }
  }

  return ops
}

/**
 * Runs virtual users until `stopAt`: each picks an op by weight and a tenant, runs it, and goes again.
 * Answers when every user has finished its op (the ops bound their own retries).
 */
export async function runActors({ ops, tenants, weights, users, stopAt, random = Math.random }) {
  const entries = Object.entries(weights).filter(([, w]) => w > 0)
  const total = entries.reduce((a, [, w]) => a + w, 0)
  const choose = () => {
    let x = random() * total
    for (const [name, w] of entries) {
      x -= w
      if (x < 0) return name
    }
    return entries[0][0]
  }
  const user = async (u) => {
    while (Date.now() < stopAt) {
      const t = tenants[u % tenants.length]
      await ops[choose()](t).catch((e) => console.error(`[load] actor error: ${e?.stack ?? e}`))
    }
  }
  await Promise.all(Array.from({ length: users }, (_, u) => user(u)))
}

// ---- A suspension in the middle of a campaign (issue 30) --------------------------------------------------

/**
 * After a resume (or before a suspension is answered) an instance other than the one that wrote the change
 * may still hold the tenant's cached principal for the moment its NOTIFY takes (decisions, Security rules
 * "Suspension": "within the principal cache's invalidation"): answers this close to either edge are not judged.
 */
export const SUSPENSION_SETTLE_MS = 2000

/**
 * Notes an answer to the suspended tenant's own request (the actors' `call`). Answers whether it is a 403
 * account_suspended of the suspension, i.e. one whose answer came after the suspension was sent and that was
 * sent before the resume was answered (plus the settle): such an answer is expected and is no failure. Any
 * other tenant's, or outside that window, is judged as before. Counts, for the check, the tenant's requests sent
 * well inside the suspended window: refused as they must be, or served (a finding).
 */
export function noteSuspension(ledger, t, r) {
  const s = ledger.suspension
  if (!s || s.tenant !== t.index || s.sentAt === null) return false
  const refused = r.body?.error?.code === 'account_suspended'
  const end = s.resumed ? s.resumed.t0 : Number.POSITIVE_INFINITY
  if (s.suspended && r.t0 > s.suspended.t1 + SUSPENSION_SETTLE_MS && r.t0 < end) {
    if (refused) s.refused++
    else if (r.status >= 200 && r.status < 300) s.served.push(`${r.route} ${r.status} at +${r.t0 - s.suspended.t1} ms`)
  }
  return refused && r.t1 >= s.sentAt && (!s.resumed || r.t0 <= s.resumed.t1 + SUSPENSION_SETTLE_MS)
}

/**
 * The calls the simulated network was asked to place, read from the instances' logs (the provider's line
 * `[simulated-network] <ISO time> placed call_… as sim_…`, providers/telephony/simulated.ts): what actually
 * reached the telephony provider, not what the service meant to dial. Answers [{ callId, at }] (ms since epoch;
 * the instances run on this machine's clock).
 */
export function simulatedDials(logChunks) {
  const out = []
  for (const m of logChunks.join('').matchAll(/\[simulated-network\] (\S+) placed (call_\S+) as /g))
    out.push({ callId: m[2], at: Date.parse(m[1]) })
  return out
}

/**
 * The suspension scenario. `tenant` is an extra tenant (not one of the mix's): `prepare()` starts its campaign
 * of `contacts` contacts at max_concurrent 2 (one in six never answers and is retried once), large enough to be
 * dialling throughout the run. `run({ from, stopAt })` suspends the tenant with the master key (PATCH
 * /users/{usr} status suspended) at a seeded moment between 35 % and 55 % of the run and records when its 200
 * arrived: the line the check draws (bench/load-consistency.mjs "suspension"). When two minutes or more of the run
 * would be left, it resumes the tenant mid-run (so that the minute sweep dials the campaign again before the end,
 * decisions "Campaigns at dial time": no kick on resume); else `finish()`, after the actors, resumes it. Just
 * before the resume the campaign is read with the master key (it must still be running, contacts pending).
 * `finish()` then stops the campaign, so that the checks wait for nothing of it, and everything else of the
 * tenant (its own user in the mix, its calls and events) is checked like any tenant's.
 */
export function createSuspension({ request, masterKey, ledger, tenant, random = Math.random, contacts = 120 }) {
  const t = tenant
  const s = {
    tenant: t.index,
    accountId: t.accountId,
    campaign: null,
    contacts,
    planned: null,
    sentAt: null,
    suspended: null,
    resumed: null,
    resumedMidRun: false,
    atResume: null,
    stopped: null,
    refused: 0,
    served: [],
  }
  ledger.suspension = s
  const asMaster = (method, path, opts = {}) =>
    request(method, path, { key: masterKey, headers: { 'x-svc-account': t.accountId }, ...opts })

  /** A write retried while its answer is lost (with one Idempotency-Key); answers [first attempt's t0, 2xx answer]. */
  async function until2xx(what, send) {
    const idempotencyKey = randomUUID()
    let first = null
    for (let i = 0; ; i++) {
      const r = await send(idempotencyKey)
      first ??= r.t0
      if (r.status >= 200 && r.status < 300) return [first, r]
      const again = r.failure || r.status >= 500 || r.status === 429 || r.body?.error?.code === 'idempotency_key_in_use'
      if (!again || i >= 60) throw new Error(`${what}: ${r.status} ${r.error ?? r.text.slice(0, 300)}`)
      await sleep(1000)
    }
  }

  async function setStatus(status) {
    const [t0, r] = await until2xx(`${status} the tenant`, (idempotencyKey) =>
      request('PATCH', `/users/${t.userId}`, {
        key: masterKey,
        body: { status },
        idempotencyKey,
        route: `suspension PATCH /users/{usr} ${status}`,
      }),
    )
    return { t0, t1: r.t1 }
  }

  async function resume() {
    // The campaign as the suspension leaves it: still running, its contacts pending (read with the master key:
    // the tenant's own key is refused).
    let c
    for (let i = 0; i < 30; i++) {
      c = await asMaster('GET', `/campaigns/${s.campaign}`, { route: 'suspension GET /campaigns/{cmp}' })
      if (!c.failure) break
      await sleep(1000)
    }
    s.atResume = { status: c.status, campaign: c.body?.status, progress: c.body?.progress }
    s.resumed = await setStatus('active')
    // Every instance lets the tenant's key in again (the others drop the cached principal on NOTIFY): four
    // answers in a row, the proxy taking turns.
    for (let inARow = 0, deadline = Date.now() + 30_000; inARow < 4 && Date.now() < deadline; ) {
      const r = await request('GET', `/campaigns/${s.campaign}`, {
        key: t.key,
        route: 'suspension GET /campaigns/{cmp}',
      })
      inARow = r.status === 200 ? inARow + 1 : 0
      if (inARow < 4) await sleep(200)
    }
  }

  return {
    state: s,
    async prepare() {
      const list = await until2xx('the campaign list', (idempotencyKey) =>
        request('POST', `/agents/${t.phoneAgent}/lists`, {
          key: t.key,
          body: { name: 'Suspension' },
          idempotencyKey,
          route: 'setup suspension list',
        }),
      )
      const listId = list[1].body.list_id
      const phones = Array.from({ length: contacts }, (_, i) =>
        i % 6 === 5 ? `+1646${500 + (i % 400)}0000` : freshPhone(t.index),
      )
      await until2xx('the campaign import', (idempotencyKey) =>
        request('POST', `/lists/${listId}/import`, {
          key: t.key,
          body: { contacts: phones.map((phone, i) => ({ phone, first_name: `S${i}` })) },
          idempotencyKey,
          route: 'setup suspension import',
        }),
      )
      const c = await until2xx('the campaign', (idempotencyKey) =>
        request('POST', '/campaigns', {
          key: t.key,
          body: {
            agent_id: t.phoneAgent,
            profile_id: t.profile,
            list_id: listId,
            name: 'Suspended mid-campaign',
            schedule: {
              timezone: 'UTC',
              days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
              start: '00:00',
              end: '24:00',
            },
            max_concurrent: 2,
            max_attempts: 2,
            retry_delay_minutes: 0.02,
          },
          idempotencyKey,
          route: 'setup suspension campaign',
        }),
      )
      s.campaign = c[1].body.campaign_id
      const start = await request('POST', `/campaigns/${s.campaign}/start`, {
        key: t.key,
        idempotencyKey: randomUUID(),
        route: 'setup suspension start',
      })
      if (start.status !== 200) throw new Error(`the campaign's start: ${start.status} ${start.text.slice(0, 300)}`)
      return s
    },
    /** Suspends (and, with time left, resumes) at the seeded moments; answers once the run's part is done. */
    async run({ from, stopAt, log = () => {} }) {
      const span = stopAt - from
      const suspendAt = from + (0.35 + 0.2 * random()) * span
      const resumeAt = suspendAt + Math.max(20_000, 0.2 * span)
      s.resumedMidRun = stopAt - resumeAt >= 120_000
      s.planned = { suspendAt: suspendAt - from, resumeAt: s.resumedMidRun ? resumeAt - from : null }
      log(
        `suspension: tenant ${t.index} (${t.accountId}), campaign ${s.campaign} of ${contacts} contacts; suspended at +${(s.planned.suspendAt / 1000).toFixed(1)} s, resumed ${s.resumedMidRun ? `at +${(s.planned.resumeAt / 1000).toFixed(1)} s` : 'after the run'}`,
      )
      await sleep(suspendAt - Date.now())
      s.sentAt = Date.now()
      s.suspended = await setStatus('suspended')
      log(
        `suspension: answered 200 at +${((s.suspended.t1 - from) / 1000).toFixed(1)} s (${s.suspended.t1 - s.suspended.t0} ms after it was sent)`,
      )
      if (!s.resumedMidRun) return
      await sleep(resumeAt - Date.now())
      await resume()
      log(`suspension: resumed at +${((s.resumed.t1 - from) / 1000).toFixed(1)} s`)
    },
    /** After the actors: resumes the tenant if the run did not, then stops its campaign. */
    async finish() {
      if (s.suspended && !s.resumed) await resume()
      // A campaign that dialled every contact after the resume has completed and answers 409 invalid_state:
      // recorded in `stopped.error`, not thrown (the checks wait for its calls like any others).
      const [, r] = await until2xx('the campaign stop', (idempotencyKey) =>
        request('POST', `/campaigns/${s.campaign}/stop`, {
          key: t.key,
          idempotencyKey,
          route: 'suspension POST /campaigns/{cmp}/stop',
        }),
      ).catch((e) => [null, { t1: Date.now(), error: String(e) }])
      s.stopped = { at: r.t1, error: r.error ?? null }
    },
  }
}
