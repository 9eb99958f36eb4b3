// Calls cost money, and numbers are routed only when owned (issue 30; decisions "Security rules": "Calls cost
// money", "Numbers"), with a real telephony provider: a server of its own with SVC_TELEPHONY=twilio against the
// local fake Twilio (test/helpers/fake-twilio.ts), and the shared server (the simulated network) for what stays
// free there. Calls run the voice loop with the openai speech provider against the fake speech server.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { encodeToneText } from '~/lib/audio'
import { createApi, err, expectError, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import {
  inboundCall,
  postWebhook,
  sid,
  startFakeTwilio,
  statusParams,
  TwilioMediaClient,
  type FakeTwilio,
  type RestCall,
  twilioServerEnv,
} from '../helpers/fake-twilio'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'
import { freshNumber } from '../helpers/phone'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

let fake: FakeTwilio
let server: TestServer
let master: Api
let origin: string
let speech: FakeSpeech
let site: TestSite
/** A paid (starter) and a trial account on the Twilio server, and a trial account on the shared server. */
let paid: Tenant
let trial: Tenant
let simTrial: Tenant
let paidAgent: string
let trialAgent: string
let simAgent: string
const PAID_TO = freshNumber()
const TRIAL_TO = freshNumber((n) => n !== PAID_TO)
const CALLER = '+14155550142'
const SALES = '+14155550177'
/** The agents' max_call_duration_s: the transfer leg's time limit. */
const MAX_CALL_S = 240

beforeAll(async () => {
  fake = await startFakeTwilio()
  speech = await startFakeSpeech()
  const port = await freePort()
  origin = `http://127.0.0.1:${port}`
  server = await startServer({ env: twilioServerEnv(fake, speech.url, port) })
  site = await serveSite({
    '/': {
      body: html(
        'Quokka Bakery',
        '<h1>Quokka Bakery</h1><p>Quokka Bakery opens every day at seven in the morning.</p>',
      ),
    },
  })
  master = createApi(server.base, server.masterKey)
  const sharedMaster = createApi(inject('base'), inject('masterKey'))
  ;[paid, trial, simTrial] = await Promise.all([
    createTenant(master),
    createTenant(master, { plan: 'trial' }),
    createTenant(sharedMaster, { plan: 'trial' }),
  ])
  ;[paidAgent, trialAgent, simAgent] = await Promise.all(
    [paid, trial, simTrial].map((t) =>
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ),
  )
  for (const [t, agent] of [
    [paid, paidAgent],
    [trial, trialAgent],
  ] as const) {
    const patched = await t.api.patch(`/agents/${agent}`, {
      max_call_duration_s: MAX_CALL_S,
      capabilities: ['transfer_call'],
      capability_settings: { transfer_directory: [{ name: 'Sales', phone: SALES }] },
    })
    expect(patched.status, patched.text).toBe(200)
  }
  fake.own(PAID_TO, TRIAL_TO)
  for (const [t, e164, agent] of [
    [paid, PAID_TO, paidAgent],
    [trial, TRIAL_TO, trialAgent],
  ] as const) {
    const num = await t.api.post('/phone-numbers', { e164, agent_id: agent })
    expect(num.status, num.text).toBe(201)
  }
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
  await speech?.close()
  await site?.close()
})

/** Rings `to` and opens the media stream (the agent's audio plays 20× real time on the fake phone). */
async function call(to: string) {
  const rang = await inboundCall(origin, { from: CALLER, to, authToken: fake.authToken, accountSid: fake.accountSid })
  expect(rang.status, rang.body).toBe(200)
  expect(rang.twiml.streamUrl, rang.body).toBeTruthy()
  const client = await TwilioMediaClient.connect(rang.twiml.streamUrl!, {
    callSid: rang.callSid,
    parameters: rang.twiml.parameters,
    playbackRate: 20,
  })
  await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
  return { client, callSid: rang.callSid, conversationId: rang.twiml.parameters.conversation_id }
}

/** The caller says `text`, then keeps the line alive with silence (the session's clock is caller audio). */
async function speak(client: TwilioMediaClient, text: string) {
  await client.say(encodeToneText(text, 8000))
  await client.silence(1_000)
}

const completed = (t: Tenant, id: string) =>
  until(
    `conversation ${id} to complete`,
    async () => {
      const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
      return r.body.status === 'completed' ? r.body : null
    },
    60_000,
  )

/** The account's voice usage totals over the last and next hour. */
async function usage(t: Tenant) {
  const from = new Date(Date.now() - 3_600_000).toISOString()
  const to = new Date(Date.now() + 3_600_000).toISOString()
  const r = await t.api.get(`/accounts/${t.accountId}/usage?from=${from}&to=${to}&group_by=channel`)
  expect(r.status, r.text).toBe(200)
  return r.body.totals as { voice_seconds: number; cost_usd: number }
}

const dialsTo = (requests: RestCall[]) => requests.filter((r) => r.path.endsWith('/Calls.json'))

describe('calls cost money (real telephony provider: Twilio)', () => {
  it('a trial account cannot place calls or start campaigns (403 plan_limit_reached); the simulated network lets it call', async () => {
    verifies('abuse.telephony.trial-calls')
    const before = fake.requests.length
    const to = freshNumber()
    expectError(
      await trial.api.post('/calls', { agent_id: trialAgent, to, role: 'a caller' }),
      403,
      'plan_limit_reached',
    )

    const profile = await trial.api.post(`/agents/${trialAgent}/profiles`, { name: 'Renewals', role: 'a caller' })
    expect(profile.status, profile.text).toBe(201)
    const list = await trial.api.post(`/agents/${trialAgent}/lists`, { name: 'One contact' })
    expect(list.status, list.text).toBe(201)
    const imp = await trial.api.post(`/lists/${list.body.list_id}/import`, { contacts: [{ phone: to, name: 'Ada' }] })
    expect(imp.status, imp.text).toBe(200)
    const campaign = await trial.api.post('/campaigns', {
      agent_id: trialAgent,
      profile_id: profile.body.profile_id,
      list_id: list.body.list_id,
      name: 'Trial campaign',
      schedule: {
        timezone: 'UTC',
        days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        start: '00:00',
        end: '24:00',
      },
    })
    expect(campaign.status, campaign.text).toBe(201)
    const cmp = campaign.body.campaign_id
    expectError(await trial.api.post(`/campaigns/${cmp}/start`), 403, 'plan_limit_reached')
    expect((await trial.api.get(`/campaigns/${cmp}`)).body.status).toBe('draft')
    // Unknown campaigns are still 404 first.
    expectError(await trial.api.post('/campaigns/cmp_999999999/start'), 404, 'not_found')
    // Nothing was dialled at Twilio for the trial account.
    await new Promise((r) => setTimeout(r, 500))
    expect(dialsTo(fake.requests.slice(before))).toEqual([])

    // A paid plan places its call through Twilio on the same server.
    const placed = await paid.api.post('/calls', { agent_id: paidAgent, to, role: 'a caller' })
    expect(placed.status, placed.text).toBe(201)
    await until('the paid call at Twilio', async () => dialsTo(fake.requests.slice(before))[0] ?? null, 10_000)
    await paid.api.delete(`/calls/${placed.body.call_id}`)

    // The simulated network (the shared server) stays free for every plan: a trial account calls there.
    const sim = await simTrial.api.post('/calls', { agent_id: simAgent, to: freshNumber(), role: 'a caller' })
    expect(sim.status, sim.text).toBe(201)
    expect(sim.body.status).toMatch(/^(ringing|queued)$/)
  })

  it("a trial account's transfer_call fails: the tool result says so and no leg is dialled at Twilio", async () => {
    verifies('abuse.telephony.trial-transfer')
    const { client, callSid, conversationId } = await call(TRIAL_TO)
    await speak(client, 'Please transfer me to Sales.')
    // The agent's answer (the refusal) plays; the call goes on until the caller hangs up.
    await client.waitFor((c) => c.echoedMarks.length >= 2, 30_000, 'the answer to play')
    await client.silence(500)
    client.hangUp()
    const conv = await completed(trial, conversationId)
    const tool = conv.transcript.find((x: any) => x.turn_type === 'tool')
    expect(tool?.tool, JSON.stringify(conv.transcript)).toMatchObject({ name: 'transfer_call', result: { ok: false } })
    expect(tool.tool.result.message).toMatch(/trial account cannot place calls or transfers/)
    expect(conv.metrics.end_reason).toBe('caller_hung_up')
    expect(fake.requests.filter((r) => r.callSid === callSid)).toEqual([])
  })

  it("a transfer leg ends at the agent's max_call_duration_s and its talk time is billed like a call, once", async () => {
    verifies('abuse.telephony.transfer-leg')
    const { client, callSid, conversationId } = await call(PAID_TO)
    await speak(client, 'Please transfer me to Sales.')
    const transferred = await until(
      'the transfer request at Twilio',
      async () => {
        await client.silence(200)
        return fake.requests.find((r) => r.callSid === callSid && typeof r.form.Twiml === 'string') ?? null
      },
      30_000,
    )
    const action = `${origin}/telephony/twilio/status?transfer_of=${conversationId}`
    expect(transferred.form.Twiml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response>' +
        `<Dial timeLimit="${MAX_CALL_S}" action="${action}" method="POST">${SALES}</Dial></Response>`,
    )
    await client.waitFor((c) => c.closed, 10_000, 'the server to close the stream')
    const conv = await completed(paid, conversationId)
    expect(conv.metrics.end_reason).toBe('transferred')
    const before = await usage(paid)

    // Twilio requests the <Dial action> when the dialled leg ends: 90 s of talk with Sales.
    const leg = {
      AccountSid: fake.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: callSid,
      CallStatus: 'in-progress',
      Direction: 'inbound',
      From: CALLER,
      To: PAID_TO,
      DialCallSid: sid('CA'),
      DialCallStatus: 'completed',
      DialCallDuration: '90',
    }
    const ended = await postWebhook(action, leg, { authToken: fake.authToken })
    expect(ended.status, ended.body).toBe(200)
    expect(ended.body).toContain('<Response/>')
    const after = await usage(paid)
    expect(after.voice_seconds - before.voice_seconds).toBe(90)
    expect(after.cost_usd - before.cost_usd).toBeCloseTo(0.075, 4)
    expect((await completed(paid, conversationId)).metrics.transfer_leg_s).toBe(90)

    // A repeated report bills nothing more; an unsigned one is refused.
    expect((await postWebhook(action, leg, { authToken: fake.authToken })).status).toBe(200)
    expect((await postWebhook(action, leg, { authToken: fake.authToken, signature: 'bad' })).status).toBe(403)
    expect(await usage(paid)).toEqual(after)
  })
})

describe('numbers (real telephony provider: Twilio)', () => {
  it('routes only a number the Twilio account owns: 400 number_not_owned, then 201 once it is bought', async () => {
    verifies('abuse.telephony.numbers-owned')
    const e164 = freshNumber((n) => n !== PAID_TO && n !== TRIAL_TO)
    const before = fake.requests.length
    expectError(await paid.api.post('/phone-numbers', { e164, agent_id: paidAgent }), 400, 'number_not_owned', 'e164')
    const lookup = fake.requests.slice(before).find((r) => r.path.includes('/IncomingPhoneNumbers.json'))
    expect(lookup).toMatchObject({ method: 'GET', authorized: true })
    expect(new URL(lookup!.path, fake.url).searchParams.get('PhoneNumber')).toBe(e164)

    fake.own(e164)
    const routed = await paid.api.post('/phone-numbers', { e164, agent_id: paidAgent })
    expect(routed.status, routed.text).toBe(201)
    expect(routed.body).toMatchObject({ e164, provider: 'twilio', agent_id: paidAgent })

    // The simulated network owns every number: the shared server routes a number nobody bought.
    const sim = await simTrial.api.post('/phone-numbers', { e164: freshNumber(), agent_id: simAgent })
    expect(sim.status, sim.text).toBe(201)
    expect(sim.body.provider).toBe('simulated')
  })

  it('a failed ownership lookup (Twilio 5xx, or unreachable) is 502 provider_unavailable, routes nothing, and a retry routes', async () => {
    verifies('abuse.gaps.lookup-unavailable', 'abuse.telephony.numbers-owned')
    const e164 = freshNumber((n) => n !== PAID_TO && n !== TRIAL_TO)
    fake.own(e164)
    const numbers = async () =>
      ((await paid.api.get('/phone-numbers?limit=100')).body.data as { e164: string }[]).map((n) => n.e164)
    const before = fake.requests.length
    // Twilio answers 500 once.
    fake.failNext(500, { code: 20500, message: 'Internal Server Error', status: 500 })
    const failed = await paid.api.post('/phone-numbers', { e164, agent_id: paidAgent })
    expectError(failed, 502, 'provider_unavailable', null)
    expect(err(failed).message).toContain(e164)
    // The tenant reads no provider URL, account SID or Twilio's own words (the log has them).
    expect(err(failed).message).not.toMatch(/http|AC[0-9a-f]{32}|Internal Server Error|20500/)
    expect(await numbers()).not.toContain(e164)
    // Twilio cannot be reached at all (the connection closes unanswered): the same.
    fake.dropNext()
    expectError(await paid.api.post('/phone-numbers', { e164, agent_id: paidAgent }), 502, 'provider_unavailable')
    expect(await numbers()).not.toContain(e164)
    expect(fake.requests.slice(before).filter((r) => r.path.includes('/IncomingPhoneNumbers.json'))).toHaveLength(2)
    // The OpenAPI document names the error on the route.
    const doc = await fetch(`${server.base}/openapi.json`).then((r) => r.json() as Promise<any>)
    expect(JSON.stringify(doc.paths['/phone-numbers'].post.responses['502'] ?? null)).toContain('provider_unavailable')
    // Twilio answers again: the retry routes the number.
    const routed = await paid.api.post('/phone-numbers', { e164, agent_id: paidAgent })
    expect(routed.status, routed.text).toBe(201)
    expect(await numbers()).toContain(e164)
  })
})

/** An account on the Twilio server that can dial out: a paid tenant, a phone agent, an owned number routed to it. */
async function dialler() {
  const t = await createTenant(master)
  const agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
  const line = freshNumber()
  fake.own(line)
  const n = await t.api.post('/phone-numbers', { e164: line, agent_id: agent })
  expect(n.status, n.text).toBe(201)
  return { t, agent }
}

/** The calls placed at Twilio to `to` (REST Calls.json requests). */
const placedTo = (to: string) => dialsTo(fake.requests).filter((r) => r.form.To === to)

describe('checks at dial time (real telephony provider: Twilio)', () => {
  it('a queued call is never dialled once the account is suspended, or moved to the trial plan: canceled, Twilio never asked', async () => {
    verifies('abuse.gaps.queued-suspended', 'abuse.gaps.queued-trial')
    const { t, agent } = await dialler()
    const place = async (to: string) => {
      const r = await t.api.post('/calls', { agent_id: agent, to, role: 'a caller' })
      expect(r.status, r.text).toBe(201)
      return r.body as { call_id: string; status: string; to: string }
    }
    const lines = (await t.api.get(`/accounts/${t.accountId}/limits`)).body.max_concurrent_calls as number
    // Every line rings at Twilio (the fake never answers, so they keep their lines).
    const ringing: string[] = []
    for (let i = 0; i < lines; i++) ringing.push((await place(freshNumber())).call_id)
    const asAccount = { headers: { 'x-svc-account': t.accountId } }
    const ended = (id: string) =>
      until(
        `call ${id} to leave the queue`,
        async () => {
          const r = await master.get(`/calls/${id}`, asAccount)
          expect(r.status, r.text).toBe(200)
          return r.body.status !== 'queued' ? r.body : null
        },
        15_000,
      )

    // Suspended while the call waits; a line frees (the operator cancels a ringing call): it is not dialled.
    const q1 = await place(freshNumber())
    expect(q1.status).toBe('queued')
    const suspended = await master.patch(`/users/${t.userId}`, { status: 'suspended' })
    expect(suspended.status, suspended.text).toBe(200)
    try {
      expect((await master.delete(`/calls/${ringing.shift()}`, asAccount)).status).toBe(200)
      const c1 = await ended(q1.call_id)
      expect(c1).toMatchObject({ status: 'canceled', outcome: 'canceled', started_at: null, answered_at: null })
      expect(c1.failure_reason).toMatch(/account was suspended/)
    } finally {
      expect((await master.patch(`/users/${t.userId}`, { status: 'active' })).status).toBe(200)
    }
    expect(placedTo(q1.to)).toEqual([])

    // Moved to the trial plan while a call waits (POST /calls would refuse it now): not dialled either.
    ringing.push((await place(freshNumber())).call_id)
    const q2 = await place(freshNumber())
    expect(q2.status).toBe('queued')
    const toTrial = await master.patch(`/admin/customers/${t.userId}/plan`, { plan: 'trial' })
    expect(toTrial.status, toTrial.text).toBe(200)
    expect((await t.api.delete(`/calls/${ringing.shift()}`)).status).toBe(200)
    const c2 = await ended(q2.call_id)
    expect(c2).toMatchObject({ status: 'canceled', outcome: 'canceled', started_at: null })
    expect(c2.failure_reason).toMatch(/trial plan, which cannot place calls on the phone network/)
    await sleep(500)
    expect(placedTo(q2.to)).toEqual([])
    for (const id of ringing) await t.api.delete(`/calls/${id}`)
  }, 180_000)

  it('a running campaign dials nothing more once the account cannot pay (402 check), nor once it is moved to the trial plan', async () => {
    verifies('abuse.gaps.campaign-unpaid', 'abuse.gaps.campaign-trial')
    const { t, agent } = await dialler()
    const profile = await t.api.post(`/agents/${agent}/profiles`, { name: 'Renewals', role: 'the renewals assistant' })
    expect(profile.status, profile.text).toBe(201)
    const phones = Array.from({ length: 6 }, () => freshNumber())
    const list = await t.api.post(`/agents/${agent}/lists`, { name: 'Contacts' })
    expect(list.status, list.text).toBe(201)
    const imp = await t.api.post(`/lists/${list.body.list_id}/import`, { contacts: phones.map((phone) => ({ phone })) })
    expect(imp.status, imp.text).toBe(200)
    const created = await t.api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile.body.profile_id,
      list_id: list.body.list_id,
      name: 'Renewals',
      max_concurrent: 2,
      schedule: {
        timezone: 'UTC',
        days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        start: '00:00',
        end: '24:00',
      },
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.campaign_id as string
    expect((await t.api.post(`/campaigns/${id}/start`)).status).toBe(200)
    const dialled = () => phones.flatMap(placedTo)
    const [first, second] = await until(
      'two campaign calls at Twilio',
      async () => (dialled().length >= 2 ? dialled() : null),
      20_000,
    )
    /** Twilio reports that nobody answered a placed call (the signed StatusCallback it was given). */
    const noAnswer = async (placed: RestCall) => {
      const url = String(placed.form.StatusCallback)
      const callSid = placed.callSid!
      const r = await postWebhook(url, statusParams({ callSid, accountSid: fake.accountSid, status: 'no-answer' }), {
        authToken: fake.authToken,
      })
      expect(r.status, r.body).toBe(204)
    }
    const settledContacts = async (n: number) =>
      until(
        `${n} contacts to be settled`,
        async () => {
          const c = (await t.api.get(`/campaigns/${id}`)).body
          return c.progress.total - c.progress.pending - (c.progress.in_progress ?? 0) >= n ? c : null
        },
        15_000,
      )

    // The account can no longer pay (no allowance, an empty wallet); a line of the campaign frees: no new dial.
    const unpaid = await master.patch(`/admin/customers/${t.userId}/plan`, { plan: 'starter', plan_limit: 0 })
    expect(unpaid.status, unpaid.text).toBe(200)
    await noAnswer(first)
    await settledContacts(1)
    await sleep(3_000)
    expect(dialled()).toHaveLength(2)

    // Moved to the trial plan instead (free, so the 402 check passes; the real network is closed to it): the
    // other line frees, still no new dial.
    const toTrial = await master.patch(`/admin/customers/${t.userId}/plan`, { plan: 'trial' })
    expect(toTrial.status, toTrial.text).toBe(200)
    await noAnswer(second)
    await settledContacts(2)
    await sleep(3_000)
    expect(dialled()).toHaveLength(2)
    const c = (await t.api.get(`/campaigns/${id}`)).body
    expect(c.status).toBe('running')
    expect(c.progress.pending).toBe(phones.length - 2)
    await t.api.post(`/campaigns/${id}/stop`)
  }, 180_000)
})
