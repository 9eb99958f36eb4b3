// Hostile input (decisions "Security rules" → Hostile input), over HTTP against a server of its own: each
// request below carries a string built to be the worst case of a pattern the service used to run on it
// (quadratic backtracking), sized near the 2 MB body limit where the route accepts that much. Every request
// must answer within 1 s while GET /v1/health, polled alongside, keeps answering within 1 s.
// Also: the audit CSV export neutralises cells that a spreadsheet would run as formulas.
// Own server: before the fixes one of these requests held the process for hours, which must not wedge the
// server other files share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, type Api, type ApiResponse } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { sleep } from '../helpers/wait'
import { parseCsv } from '../helpers/csv'

const NEAR_LIMIT = 1_900_000
const BOUND_MS = 1000

let server: TestServer
let master: Api
let t: Tenant
let site: TestSite
let agentId: string

beforeAll(async () => {
  server = await startServer()
  master = createApi(server.base, server.masterKey)
  site = await serveSite({
    '/': {
      body: html(
        'Wombat Bikes | Home',
        '<h1>Wombat Bikes</h1><p>Wombat Bikes repairs bicycles in Perth.</p><p>A puncture repair costs $12.</p>',
      ),
    },
  })
  t = await createTenant(master)
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  const p = await t.api.patch(`/agents/${agentId}`, {
    capabilities: ['capture_lead'],
    capability_settings: { lead_emails: ['sales@example.com'] },
  })
  expect(p.status, p.text).toBe(200)
}, 300_000)

afterAll(async () => {
  await site?.close()
  await server?.stop('SIGKILL')
})

interface Probed {
  r: ApiResponse
  ms: number
  slowest: number
}

/**
 * Runs one request while polling GET /v1/health every 100 ms from the start of the request until it has
 * answered; answers the response, how long it took and the slowest health probe.
 */
async function probed(request: () => Promise<ApiResponse>): Promise<Probed> {
  const probes: number[] = []
  let done = false
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now()
      try {
        const r = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(30_000) })
        await r.arrayBuffer()
        probes.push(r.status === 200 ? performance.now() - t0 : Number.POSITIVE_INFINITY)
      } catch {
        probes.push(Number.POSITIVE_INFINITY)
      }
      await sleep(100)
    }
  })()
  const t0 = performance.now()
  const r = await request()
  const ms = performance.now() - t0
  done = true
  await poller
  expect(probes.length).toBeGreaterThan(0)
  return { r, ms, slowest: Math.max(...probes) }
}

/**
 * The hostile request must answer within 1 s and every health probe during it within 1 s. On a loaded
 * machine a benign request of the same size and route (the control, run just before) can itself take
 * longer than that, so its time is allowed on top: the bound catches what the old patterns did (seconds
 * to hours of one blocked event loop), not the machine's load.
 */
async function withinBound(
  label: string,
  control: () => Promise<ApiResponse>,
  hostile: () => Promise<ApiResponse>,
): Promise<ApiResponse> {
  const c = await probed(control)
  const h = await probed(hostile)
  const slack = Math.max(c.ms, c.slowest)
  console.log(
    `${label}: control ${c.r.status} in ${c.ms.toFixed(0)} ms (slowest health ${c.slowest.toFixed(0)} ms); ` +
      `hostile ${h.r.status} in ${h.ms.toFixed(0)} ms (slowest health ${h.slowest.toFixed(0)} ms); bound ${(BOUND_MS + slack).toFixed(0)} ms`,
  )
  expect(h.ms, `${label} took ${h.ms.toFixed(0)} ms`).toBeLessThan(BOUND_MS + slack)
  expect(h.slowest, `a health probe took ${h.slowest.toFixed(0)} ms during ${label}`).toBeLessThan(BOUND_MS + slack)
  return h.r
}

describe('hostile input: every path answers within 1 s and health keeps answering', () => {
  it('conversation create: a 1.9 MB identity.email built against the e-mail pattern is refused by length first', async () => {
    verifies('security.hostile-input.patterns')
    // "a@" then dots: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ tried every split of the dots before failing on the space.
    const email = 'a@' + '.'.repeat(NEAR_LIMIT) + ' '
    const r = await withinBound(
      'POST /conversations identity.email 1.9 MB',
      () => t.api.post('/conversations', { agent_id: agentId, identity: { email: 'x'.repeat(email.length) } }),
      () => t.api.post('/conversations', { agent_id: agentId, identity: { email } }),
    )
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'validation_error', field: 'identity.email' })
    // Just under the length bound the same shape is judged quickly, and still refused as an address.
    const short = await withinBound(
      'POST /conversations identity.email 1000',
      () => t.api.post('/conversations', { agent_id: agentId, identity: { email: 'x'.repeat(1000) } }),
      () => t.api.post('/conversations', { agent_id: agentId, identity: { email: 'a@' + '.'.repeat(997) + ' ' } }),
    )
    expect(short.body.error).toMatchObject({ code: 'invalid_email', field: 'identity.email' })
  })

  it('agent patch: refinement rules against three 200,000-character prompts built against the conflict scan', async () => {
    verifies('security.hostile-input.patterns')
    // Phone: 6,400 sentences that each share their words with every rule (the scan compared every rule with
    // every sentence); chat and voice: one word with a run of apostrophes inside (/'+$/ retried from each).
    const instructions = 'Always quote the price of item. Never quote the price of item. '
      .repeat(3200)
      .slice(0, 200_000)
    const chat = 'a' + "'".repeat(199_997) + 'b.'
    const voice = 'Avoid ' + "'".repeat(199_990) + 'x.'
    // Each rule: valid, 500 characters once normalised, ending in a run the old trailing-noise pattern retried.
    const rules = Array.from({ length: 100 }, (_, i) => `Never quote the price of item ${i} ` + '. '.repeat(230) + 'x')
    const body = { instructions, chat_instructions: chat, voice_chat_instructions: voice, refinement_rules: rules }
    // The control: prompts and rules of the same sizes that no version of the scan finds hard (one long
    // sentence per prompt).
    const prose = (seed: string) => `${seed} `.repeat(40_000).slice(0, 200_000)
    const control = {
      instructions: prose('give'),
      chat_instructions: prose('offer'),
      voice_chat_instructions: prose('say'),
      refinement_rules: Array.from(
        { length: 100 },
        (_, i) => `Mention the opening hours when asked about visit ${i} ` + 'and stay polite '.repeat(28),
      ),
    }
    const r = await withinBound(
      'PATCH /agents refinement_rules + 3 × 200k prompts',
      () => t.api.patch(`/agents/${agentId}`, control),
      () => t.api.patch(`/agents/${agentId}`, body),
    )
    expect(r.status, r.text.slice(0, 300)).toBe(200)
    expect(r.body.refinement.rules).toHaveLength(100)
    expect(r.body.refinement.conflicts.some((c: any) => c.with.kind === 'prompt' && c.with.surface === 'phone')).toBe(
      true,
    )
    // A prompt or a rule over its bound is refused before any pattern.
    const big = await withinBound(
      'PATCH /agents instructions 1.9 MB',
      () => t.api.patch(`/agents/${agentId}`, { instructions: 'x'.repeat(NEAR_LIMIT) }),
      () => t.api.patch(`/agents/${agentId}`, { instructions: "'".repeat(NEAR_LIMIT) }),
    )
    expect(big.status).toBe(400)
    const bigRule = await withinBound(
      'PATCH /agents refinement rule 1.9 MB',
      () => t.api.patch(`/agents/${agentId}`, { refinement_rules: ['x'.repeat(NEAR_LIMIT)] }),
      () => t.api.patch(`/agents/${agentId}`, { refinement_rules: ['. '.repeat(NEAR_LIMIT / 2) + 'x'] }),
    )
    expect(bigRule.status).toBe(400)
  })

  it('chat message: the engine indexes 1.1 MB of knowledge and scores a 10,000-character question of 1,700 of its terms', async () => {
    verifies('security.hostile-input.patterns')
    // The whole chat prompt becomes knowledge the local engine indexes: one sentence of 200,000 characters.
    const knowledge =
      '## Knowledge\n' +
      Array.from({ length: 25_000 }, (_, i) => `w${i.toString(36)}`)
        .join(' ')
        .slice(0, 199_000)
    // The control: the same size of knowledge in ordinary sentences, and an ordinary question of the same size.
    const prose =
      '## Knowledge\n' +
      Array.from({ length: 25_000 }, (_, i) => `Item ${i} costs ${i} dollars.`)
        .join(' ')
        .slice(0, 199_000)
    const question = 'Do you repair bikes? '.repeat(500).slice(0, 10_000)
    // Knowledge the engine scores every question against: a kept-verbatim document of 900,000 characters.
    const catalogue = Array.from({ length: 36_000 }, (_, i) => `Item w${i.toString(36)} costs ${i} dollars.`)
      .join(' ')
      .slice(0, 900_000)
    const doc = await t.api.post(`/agents/${agentId}/kb/documents`, {
      title: 'Catalogue',
      text: catalogue,
      keep_verbatim: true,
    })
    expect(doc.status, doc.text.slice(0, 200)).toBe(202)
    for (let i = 0; ; i++) {
      const d = await t.api.get(`/agents/${agentId}/kb/documents/${doc.body.doc_id}`)
      if (d.body.status !== 'processing') {
        expect(d.body.status).toBe('indexed')
        break
      }
      expect(i).toBeLessThan(600)
      await sleep(200)
    }
    const conversation = async (chatInstructions: string) => {
      expect(
        (await t.api.patch(`/agents/${agentId}`, { chat_instructions: chatInstructions, refinement_rules: [] })).status,
      ).toBe(200)
      const c = await t.api.post('/conversations', { agent_id: agentId })
      expect(c.status).toBe(201)
      return c.body.conversation_id as string
    }
    // A lead request (so the engine looks for an address in it) made of 1,700 distinct terms of the knowledge:
    // BM25 counted each term through every token of the knowledge (terms × tokens).
    const text = ('Call me ' + Array.from({ length: 1700 }, (_, i) => `w${(i * 19).toString(36)}`).join(' ')).slice(
      0,
      10_000,
    )
    const r = await withinBound(
      'POST /conversations/{conv}/messages 10k question over 1.1 MB knowledge',
      async () => t.api.post(`/conversations/${await conversation(prose)}/messages`, { text: question }),
      async () => t.api.post(`/conversations/${await conversation(knowledge)}/messages`, { text }),
    )
    expect(r.status, r.text.slice(0, 300)).toBe(200)
    const conv = await conversation(knowledge)
    const big = await withinBound(
      'POST /conversations/{conv}/messages 1.9 MB',
      () => t.api.post(`/conversations/${conv}/messages`, { text: 'x '.repeat(NEAR_LIMIT / 2) }),
      () => t.api.post(`/conversations/${conv}/messages`, { text: 'a'.repeat(NEAR_LIMIT) }),
    )
    expect(big.status).toBe(400)
  })

  it('redaction: a conversation read with redact=true over a 1.9 MB custom value built against the e-mail pattern', async () => {
    verifies('security.hostile-input.patterns')
    // Address characters with no @ (the e-mail pattern retried from each), then digit groups (cards, phones).
    const note = 'a'.repeat(NEAR_LIMIT - 200_000) + '1 '.repeat(100_000)
    const plain = 'hello world '.repeat(Math.ceil(note.length / 12)).slice(0, note.length)
    const create = (text: string) =>
      t.api.post('/conversations', {
        agent_id: agentId,
        custom: { note: text },
        identity: { email: 'jane@example.com' },
      })
    const c = await withinBound(
      'POST /conversations custom 1.9 MB',
      () => create(plain),
      () => create(note),
    )
    expect(c.status).toBe(201)
    const control = await create(plain)
    const r = await withinBound(
      'GET /conversations/{conv}?redact=true',
      () => t.api.get(`/conversations/${control.body.conversation_id}?redact=true`),
      () => t.api.get(`/conversations/${c.body.conversation_id}?redact=true`),
    )
    expect(r.status).toBe(200)
    expect(r.body.data?.identity?.email ?? r.body.identity?.email).toBe('**************om')
  })
})

describe('hostile input outside the four named paths', () => {
  it('U+0000 in a body value, a body key, a query value or a path parameter is 400 validation_error naming the field, and nothing is written', async () => {
    verifies('security.hostile-input.nul')
    // PostgreSQL stores no NUL in text or jsonb: before issue 14 each of these was a 500 at the write.
    const email = `nul-${Date.now()}@example.com`
    const inValue = await master.post('/users', { email, name: 'Ann\u0000Lee' })
    expect(inValue.status, inValue.text).toBe(400)
    expect(inValue.body.error).toMatchObject({ code: 'validation_error', field: 'name' })
    const inKey = await master.post('/users', { email, external_ids: { 'crm\u0000': 'c-1' } })
    expect(inKey.status, inKey.text).toBe(400)
    expect(inKey.body.error.code).toBe('validation_error')
    expect(inKey.body.error.field).toMatch(/^external_ids/)
    // Nothing was written: the address is still free.
    const created = await master.post('/users', { email })
    expect(created.status, created.text).toBe(201)

    const conv = await t.api.post('/conversations', { agent_id: agentId })
    expect(conv.status, conv.text).toBe(201)
    const turn = await t.api.post(`/conversations/${conv.body.conversation_id}/messages`, { text: 'hi\u0000there' })
    expect(turn.status, turn.text).toBe(400)
    expect(turn.body.error).toMatchObject({ code: 'validation_error', field: 'text' })
    const read = await t.api.get(`/conversations/${conv.body.conversation_id}?include=transcript`)
    expect(read.body.turn_count).toBe(read.body.transcript.length)
    expect(read.body.transcript.some((x: { text: string }) => x.text.includes('there'))).toBe(false)

    const inQuery = await t.api.get('/conversations?external_session_id=a%00b')
    expect(inQuery.status, inQuery.text).toBe(400)
    expect(inQuery.body.error).toMatchObject({ code: 'validation_error', field: 'external_session_id' })
    const inPath = await t.api.get('/agents/agt_1%00')
    expect(inPath.status, inPath.text).toBeLessThan(500)
  })

  it('a body nested 100,000 levels deep under a field that takes any JSON is 400 validation_error, not a stack overflow', async () => {
    verifies('security.hostile-input.patterns')
    // Before: the capability_settings size check (JSON.stringify) overflowed the stack, a 500, with or
    // without a NUL at the bottom. 65 levels is the first depth refused; 64 still reaches the route's rules.
    const nest = (d: number, leaf: string) => `{"capability_settings":{"x":${'['.repeat(d)}${leaf}${']'.repeat(d)}}}`
    // An agent that does not exist: the body is judged before the route looks the agent up, and nothing changes.
    const patch = (raw: string) =>
      t.api.request('PATCH', '/agents/agt_999999999', { raw, headers: { 'content-type': 'application/json' } })
    for (const leaf of ['"a"', '"a\\u0000"']) {
      const r = await patch(nest(100_000, leaf))
      expect(r.status, r.text.slice(0, 300)).toBe(400)
      expect(r.body.error).toMatchObject({ code: 'validation_error', field: null })
      expect(r.body.error.message).toContain('nests deeper than 64 levels')
    }
    const shallow = await patch(nest(61, '"a"'))
    expect(shallow.status, shallow.text).toBe(404)
  })

  it('a request path of 15,000 slashes (the MCP path check trimmed them with /\\/+$/ on every request)', async () => {
    verifies('security.hostile-input.patterns')
    // A path is bounded by the header limit (16 KB), so four such requests at once: each one used to hold the
    // event loop for most of a second.
    const four = (path: string) => async () => (await Promise.all([1, 2, 3, 4].map(() => master.get(path))))[3]
    const r = await withinBound(
      '4 × GET /v1/<15,000 slashes>x',
      four('/' + 'a'.repeat(15_000) + 'x'),
      four('/' + '/'.repeat(15_000) + 'x'),
    )
    expect(r.status).toBe(404)
  })

  it('a 1.9 MB text document of spaces is ingested without holding the process (tidy used /[ \\t]+\\n/)', async () => {
    verifies('security.hostile-input.patterns')
    // Posting answers 202 at once; the ingest job then tidies the text in this process. Each request below
    // posts the document and polls until the job has finished, with health polled throughout.
    const ingest = async (text: string) => {
      const r = await t.api.post(`/agents/${agentId}/kb/documents`, { title: 'Blanks', text })
      expect(r.status, r.text.slice(0, 200)).toBe(202)
      for (;;) {
        const d = await t.api.get(`/agents/${agentId}/kb/documents/${r.body.doc_id}`)
        if (d.body.status !== 'processing') return d
        await sleep(200)
      }
    }
    const d = await withinBound(
      'POST kb/documents text 1.9 MB + ingest',
      () => ingest('word '.repeat(NEAR_LIMIT / 5 - 1) + 'end'),
      () => ingest(' '.repeat(NEAR_LIMIT) + 'end'),
    )
    expect(d.body.status).toBe('indexed')
  })
})

describe('audit CSV export', () => {
  it('prefixes a single quote to cells that begin with =, +, -, @ (formula injection)', async () => {
    verifies('security.csv-formula')
    const from = new Date(Date.now() - 2000).toISOString()
    const tag = `csv-${process.pid}-${Date.now().toString(36)}`
    const agents = [
      `=HYPERLINK("http://evil.example/${tag}","x")`,
      `+1+1 ${tag}`,
      `-2+3 ${tag}`,
      `@SUM(1) ${tag}`,
      `plain ${tag}`,
    ]
    for (const ua of agents)
      expect((await master.get('/users?limit=1', { headers: { 'user-agent': ua } })).status).toBe(200)
    let mine: string[][] = []
    let col = -1
    for (let i = 0; i < 60 && mine.length < agents.length; i++) {
      await sleep(200)
      const r = await master.get(`/audit?format=csv&from=${encodeURIComponent(from)}`)
      expect(r.status).toBe(200)
      const [header, ...records] = parseCsv(r.text)
      col = header.indexOf('user_agent')
      mine = records.filter((rec) => rec[col]?.includes(tag))
    }
    const cells = mine.map((rec) => rec[col]).sort()
    expect(cells).toEqual(
      [
        `'+1+1 ${tag}`,
        `'-2+3 ${tag}`,
        `'=HYPERLINK("http://evil.example/${tag}","x")`,
        `'@SUM(1) ${tag}`,
        `plain ${tag}`,
      ].sort(),
    )
  })
})
