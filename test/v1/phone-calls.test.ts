// Inbound phone calls on the simulated network, over HTTP against the shared server (SVC_TELEPHONY and
// SVC_SPEECH at their offline defaults): a number routed to an agent built from a site, a caller who says
// three things, and everything the call leaves behind — answers from the site's knowledge, audio offsets,
// duration, summary, voice seconds in usage, a recording that is an MP3, and on the caller's next call the
// first call's summary in the agent's context (rule 4), observed through the answer it makes possible.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const TO = `+1415555${String(1000 + (process.pid % 8000)).padStart(4, '0')}`
const CALLER = '+14155550142'

describe('inbound phone calls (simulated network)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agentId: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Bakery',
          '<h1>Quokka Bakery</h1><p>Quokka Bakery opens every day at seven in the morning.</p>' +
            '<p>Our rye sourdough loaf costs nine dollars.</p><p>We deliver cakes anywhere in Fremantle for free.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const patched = await t.api.patch(`/agents/${agentId}`, { record_calls: true })
    expect(patched.status, patched.text).toBe(200)
    const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId, label: 'Main line' })
    expect(num.status, num.text).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  const finished = (api: typeof t.api, id: string) =>
    until(
      `conversation ${id} to complete with its summary`,
      async () => {
        const r = await api.get(`/conversations/${id}?include=transcript,summary,metrics,identity`)
        return r.body.status === 'completed' && r.body.summary_status === 'ready' ? r.body : null
      },
      60_000,
    )

  let first: any

  it('answers a simulated call from the knowledge, with audio offsets, duration, summary and usage', async () => {
    verifies('calls.inbound-simulated')
    verifies('calls.audio-offsets')
    const from = new Date(Date.now() - 60_000).toISOString()
    const r = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: CALLER,
      utterances: [
        'Hello, this is about the Kowalski wedding cake. What time does the bakery open every day?',
        'How much is the rye sourdough loaf?',
        'Do you deliver cakes to Fremantle?',
      ],
    })
    expect(r.status, r.text).toBe(202)
    expect(r.body).toMatchObject({ conversation_id: expect.stringMatching(/^conv_u\d+$/), status: 'in_progress' })
    first = await finished(t.api, r.body.conversation_id)
    expect(first).toMatchObject({
      channel_detail: { channel: 'phone_inbound' },
      agent_id: agentId,
      has_recording: true,
    })
    const turns = first.transcript as any[]
    const visitor = turns.filter((x) => x.speaker === 'visitor')
    const answers = turns.filter((x) => x.speaker === 'agent' && x.turn_type === 'answer')
    expect(turns[0]).toMatchObject({ speaker: 'agent', turn_type: 'greeting' })
    expect(visitor.map((x) => x.text)).toEqual([
      'Hello, this is about the Kowalski wedding cake. What time does the bakery open every day?',
      'How much is the rye sourdough loaf?',
      'Do you deliver cakes to Fremantle?',
    ])
    expect(answers).toHaveLength(3)
    expect(answers[0].text).toMatch(/seven in the morning/)
    expect(answers[1].text).toMatch(/nine dollars/)
    expect(answers[2].text).toMatch(/Fremantle/)
    // Every spoken turn sits on the call's audio clock, in order, without overlap.
    let clock = -1
    for (const x of turns) {
      expect(Number.isInteger(x.audio_offset_ms), JSON.stringify(x)).toBe(true)
      expect(Number.isInteger(x.audio_duration_ms)).toBe(true)
      expect(x.audio_duration_ms).toBeGreaterThan(0)
      expect(x.audio_offset_ms).toBeGreaterThan(clock)
      clock = x.audio_offset_ms + x.audio_duration_ms - 1
      expect(x.confidence ?? null).toBeNull()
    }
    // Answer to hang-up on the same clock: at least the last answer's end.
    const last = turns[turns.length - 1]
    expect(first.duration_s).toBeGreaterThanOrEqual(Math.floor((last.audio_offset_ms + last.audio_duration_ms) / 1000))
    expect(first.duration_s).toBeLessThan(120)
    expect(first.summary.text.length).toBeGreaterThan(0)
    expect(first.identity).toMatchObject({ phone_e164: CALLER })

    const to = new Date(Date.now() + 60_000).toISOString()
    const usage = await t.api.get(
      `/accounts/${t.accountId}/usage?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&group_by=channel`,
    )
    expect(usage.status, usage.text).toBe(200)
    const phone = usage.body.data.find((row: any) => row.channel === 'phone_inbound')
    expect(phone).toMatchObject({ conversations: 1, voice_seconds: first.duration_s })
    expect(phone.cost_usd).toBeGreaterThan(0)
  })

  it('stores a recording that plays: a signed URL serving MP3 audio, with byte ranges', async () => {
    verifies('calls.recording')
    const rec = await t.api.get(`/conversations/${first.conversation_id}/recording`)
    expect(rec.status, rec.text).toBe(200)
    expect(rec.body.duration_s).toBeGreaterThan(0)
    const audio = await fetch(rec.body.url)
    expect(audio.status).toBe(200)
    expect(audio.headers.get('content-type')).toBe('audio/mpeg')
    const bytes = new Uint8Array(await audio.arrayBuffer())
    // An MPEG audio frame header: 11 sync bits, then layer III.
    expect(bytes[0]).toBe(0xff)
    expect(bytes[1] & 0xe0).toBe(0xe0)
    expect((bytes[1] >> 1) & 0x3).toBe(0x1)
    // 24 kbit/s for the call's length, give or take the encoder's framing.
    expect(bytes.length).toBeGreaterThan(rec.body.duration_s * 2_000)
    const part = await fetch(rec.body.url, { headers: { range: 'bytes=0-99' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${bytes.length}`)
    expect((await part.arrayBuffer()).byteLength).toBe(100)
    const forged = await fetch(rec.body.url.replace(/token=[^&]+/, 'token=abc'))
    // invalid_token is 400 since the password reset (the catalogue gives a code one status).
    expect(forged.status).toBe(400)
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('invalid_token')
    // Another tenant cannot even learn that the recording exists.
    const foreign = await other.api.get(`/conversations/${first.conversation_id}/recording`)
    expect(foreign.status).toBe(404)
  })

  it('counts recording downloads in the audio rate class, per URL token and per client IP', async () => {
    verifies('calls.recording', 'contract.smaller-points')
    const urlOf = async () => (await t.api.get(`/conversations/${first.conversation_id}/recording`)).body.url as string
    const get = (url: string, ip: string) => fetch(url, { headers: { range: 'bytes=0-9', 'x-forwarded-for': ip } })
    const [ipA, ipB, ipC] = ['198.51.100.21', '198.51.100.22', '198.51.100.23']
    // A URL is signed per second: the one the test above played may be this one, its budget partly spent.
    const one = await urlOf()
    const hit = await get(one, ipA)
    expect(hit.status).toBe(206)
    const policy = /^"audio";q=(\d+);w=60$/.exec(hit.headers.get('ratelimit-policy') ?? '')
    expect(policy, hit.headers.get('ratelimit-policy') ?? '').not.toBeNull()
    const limit = Number(policy![1])
    const left = Number(hit.headers.get('x-ratelimit-remaining'))
    expect(left).toBeLessThan(limit)
    for (let i = 0; i < left; i++) expect((await get(one, ipA)).status).toBe(206)
    // The URL's budget is spent: refused from a fresh address too.
    const spent = await get(one, ipB)
    expect(spent.status).toBe(429)
    expect(spent.headers.get('retry-after')).toBeTruthy()
    expect(((await spent.json()) as any).error.code).toBe('rate_limited')
    // A new URL has a budget of its own, but not from an address that spent its own: ipA runs out first.
    await sleep(1100)
    const two = await urlOf()
    expect(two).not.toBe(one)
    let played = 0
    while (played <= limit && (await get(two, ipA)).status === 206) played++
    expect(played).toBeLessThan(limit)
    expect((await get(two, ipC)).status).toBe(206)
  })

  it("gives the caller's next call the first call's summary (rule 4)", async () => {
    verifies('calls.inbound-history')
    const r = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: CALLER,
      utterances: ['What was the outcome of my previous call, was it resolved?'],
    })
    expect(r.status, r.text).toBe(202)
    const second = await finished(t.api, r.body.conversation_id)
    const answer = (second.transcript as any[]).find((x) => x.turn_type === 'answer')
    // The site says nothing about outcomes: only the block about the previous call can (date, outcome, summary).
    expect(answer.text).toContain(`${first.started_at.slice(0, 10)} (outcome: ${first.outcome})`)
    // A different caller's call has no such block.
    const r3 = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550177',
      utterances: ['What was the outcome of my previous call, was it resolved?'],
    })
    const third = await finished(t.api, r3.body.conversation_id)
    const answer3 = (third.transcript as any[]).find((x) => x.turn_type === 'answer')
    expect(answer3.text).not.toMatch(/outcome:/)
  })

  it('refuses what a caller may not do: another tenant, a number without an agent, bad numbers', async () => {
    verifies('calls.simulator-errors')
    const foreign = await other.api.post('/simulator/inbound-calls', { to: TO, from: CALLER, utterances: ['Hi'] })
    expect(foreign.status).toBe(404)
    const bad = await t.api.post('/simulator/inbound-calls', { to: '4155550123', from: CALLER, utterances: ['Hi'] })
    expect(err(bad)).toMatchObject({ code: 'invalid_phone', field: 'to' })
    const badFrom = await t.api.post('/simulator/inbound-calls', { to: TO, from: 'anonymous', utterances: ['Hi'] })
    expect(err(badFrom)).toMatchObject({ code: 'invalid_phone', field: 'from' })
    const none = await t.api.post('/simulator/inbound-calls', { to: TO, from: CALLER, utterances: [] })
    expect(err(none)).toMatchObject({ code: 'validation_error', field: 'utterances' })
    const extra = await t.api.post('/simulator/inbound-calls', { to: TO, from: CALLER, utterances: ['x'], x: 1 })
    expect(err(extra)).toMatchObject({ code: 'unsupported_field', field: 'x' })

    const spare = `+1415556${String(1000 + (process.pid % 8000)).padStart(4, '0')}`
    const num = await t.api.post('/phone-numbers', { e164: spare })
    expect(num.status, num.text).toBe(201)
    const refused = await t.api.post('/simulator/inbound-calls', { to: spare, from: CALLER, utterances: ['Hi'] })
    expect(refused.status, refused.text).toBe(202)
    expect(refused.body).toMatchObject({ conversation_id: expect.stringMatching(/^conv_u/), status: 'failed' })
    const conv = await t.api.get(`/conversations/${refused.body.conversation_id}?include=metrics`)
    expect(conv.body).toMatchObject({
      status: 'failed',
      channel_detail: { channel: 'phone_inbound' },
      agent_id: null,
      agent_type: 'phone',
    })
  })

  it('ends calls by the agent settings: silence timeout, end-call phrases; transfers through the provider', async () => {
    verifies('calls.session-rules')
    const p = await t.api.patch(`/agents/${agentId}`, {
      silence_timeout_s: 4,
      end_call_phrases: ['that is all for today'],
      capabilities: ['transfer_call'],
      capability_settings: { transfer_directory: [{ name: 'Sales', phone: '+14155550100' }] },
    })
    expect(p.status, p.text).toBe(200)

    // A caller who stays silent: the agent says so and hangs up after silence_timeout_s of call audio.
    const quiet = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550181',
      utterances: ['When do you open?'],
      hang_up: false,
    })
    const q = await finished(t.api, quiet.body.conversation_id)
    expect(q.metrics.end_reason).toBe('silence_timeout')
    const qt = q.transcript as any[]
    expect(qt[qt.length - 1]).toMatchObject({ speaker: 'agent', turn_type: 'answer' })
    expect(qt[qt.length - 1].text).toMatch(/haven't heard anything/)
    // The timeout counts from the end of the last answer, on the call's clock.
    const lastAnswer = qt[qt.length - 2]
    expect(
      qt[qt.length - 1].audio_offset_ms - (lastAnswer.audio_offset_ms + lastAnswer.audio_duration_ms),
    ).toBeGreaterThanOrEqual(4000)

    // An end-call phrase from the caller ends the call after the answer, not the caller's hang-up.
    const bye = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550182',
      utterances: ['Thanks, that is all for today', 'This should never be heard'],
    })
    const b = await finished(t.api, bye.body.conversation_id)
    expect(b.metrics.end_reason).toBe('end_phrase')
    expect((b.transcript as any[]).filter((x) => x.speaker === 'visitor')).toHaveLength(1)

    // A caller who asks not to be called again hears it confirmed (and is listed: test/unit/calls.test.ts,
    // test/integration/dnc.test.ts).
    const out = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550184',
      utterances: ["Please don't call me again"],
    })
    const o = await finished(t.api, out.body.conversation_id)
    const reply = (o.transcript as any[]).find((x) => x.turn_type === 'answer')
    expect(reply.text).toBe("Understood. We won't call this number again.")

    // transfer_call runs, says so, and hands the call to the provider: outcome transferred.
    const tr = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550183',
      utterances: ['Please transfer me to Sales'],
    })
    const c = await finished(t.api, tr.body.conversation_id)
    expect(c.metrics.end_reason).toBe('transferred')
    expect(c.outcome).toBe('transferred')
    const tool = (c.transcript as any[]).find((x) => x.turn_type === 'tool')
    expect(tool).toBeTruthy()
    // A transfer hands the caller to a person: the answer is a handoff turn and the call is escalated.
    const spoken = (c.transcript as any[]).filter((x) => x.turn_type === 'handoff')
    expect(spoken[spoken.length - 1].text).toMatch(/Transferring you to Sales/)
    expect(c.escalated).toBe(true)
  })

  it('counts calls against the inbound daily quota: over it, a call is refused with a spoken message and recorded failed', async () => {
    verifies('calls.quotas')
    // Inbound calls have their own daily quota (issue 30, "Inbound quotas"); this file's earlier calls used it up.
    const limit = await master.patch(`/users/${t.userId}`, { limits: { inbound_calls_per_day: 1 } })
    expect(limit.status, limit.text).toBe(200)
    const r = await t.api.post('/simulator/inbound-calls', { to: TO, from: CALLER, utterances: ['Hi'] })
    expect(r.status, r.text).toBe(202)
    expect(r.body.status).toBe('failed')
    const conv = await t.api.get(`/conversations/${r.body.conversation_id}?include=metrics`)
    expect(conv.body).toMatchObject({ status: 'failed', agent_id: agentId })
    expect(conv.body.metrics.failure_reason).toBe('quota_exceeded')
    const back = await master.patch(`/users/${t.userId}`, { limits: { inbound_calls_per_day: null } })
    expect(back.status, back.text).toBe(200)
    const ok = await t.api.post('/simulator/inbound-calls', { to: TO, from: CALLER, utterances: ['Hi'] })
    expect(ok.body.status).toBe('in_progress')
    await finished(t.api, ok.body.conversation_id)
  })
})
