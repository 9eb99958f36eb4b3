// A refused transfer on the real phone network (issue 30; decisions, Security rules "Calls cost money"): an
// agent's transfer_directory number that the dial rules refuse when transfer_call runs (call_countries set by
// the operator after the directory was saved) places no leg at Twilio, and the tool result says why. A server
// of its own with SVC_TELEPHONY=twilio against the fake Twilio, always on a database of its own (on PostgreSQL,
// one created for this file): call_countries is platform-wide, and on the run's shared PostgreSQL every other
// test server would apply it within its 5 s poll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeToneText } from '~/lib/audio'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import {
  inboundCall,
  startFakeTwilio,
  TwilioMediaClient,
  type FakeTwilio,
  twilioServerEnv,
} from '../helpers/fake-twilio'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { freshNumber } from '../helpers/phone'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

let fake: FakeTwilio
let server: TestServer
let origin: string
let speech: FakeSpeech
let site: TestSite
let master: Api
let t: Tenant
let own: OwnDatabase
const TO = freshNumber()
const CALLER = '+14155550142'
/** Sales, in the US: allowed when the directory is saved, outside call_countries once the operator sets GB. */
const SALES = '+14155550177'

beforeAll(async () => {
  fake = await startFakeTwilio()
  speech = await startFakeSpeech()
  const port = await freePort()
  own = await ownDatabase('gaps_transfer')
  origin = `http://127.0.0.1:${port}`
  server = await startServer({ env: { ...twilioServerEnv(fake, speech.url, port), ...own.env } })
  master = createApi(server.base, server.masterKey)
  site = await serveSite({
    '/': { body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>Quokka Bakery opens at seven.</p>') },
  })
  t = await createTenant(master)
  const agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
  const patched = await t.api.patch(`/agents/${agent}`, {
    capabilities: ['transfer_call'],
    capability_settings: { transfer_directory: [{ name: 'Sales', phone: SALES }] },
  })
  expect(patched.status, patched.text).toBe(200)
  fake.own(TO)
  const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agent })
  expect(num.status, num.text).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
  await speech?.close()
  await site?.close()
  await own?.drop()
})

/** A caller rings the agent's number and asks for Sales (the agent's audio plays 20× real time). */
async function askForSales() {
  const rang = await inboundCall(origin, {
    from: CALLER,
    to: TO,
    authToken: fake.authToken,
    accountSid: fake.accountSid,
  })
  expect(rang.status, rang.body).toBe(200)
  const client = await TwilioMediaClient.connect(rang.twiml.streamUrl!, {
    callSid: rang.callSid,
    parameters: rang.twiml.parameters,
    playbackRate: 20,
  })
  await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
  await client.say(encodeToneText('Please transfer me to Sales.', 8000))
  await client.silence(1_000)
  return { client, callSid: rang.callSid, conversationId: rang.twiml.parameters.conversation_id }
}

const completed = (id: string) =>
  until(
    `conversation ${id} to complete`,
    async () => {
      const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
      return r.body.status === 'completed' ? r.body : null
    },
    60_000,
  )

/** The transfer requests Twilio received for a call (new TwiML for the live call). */
const transfersOf = (callSid: string) =>
  fake.requests.filter((r) => r.callSid === callSid && typeof r.form.Twiml === 'string')

describe('a refused transfer (real telephony provider: Twilio)', () => {
  it('a directory number outside call_countries is not transferred to: ok false, no leg at Twilio; allowed again, it is', async () => {
    verifies('abuse.gaps.transfer-refused')
    const set = await master.patch('/admin/config', { call_countries: ['GB'] })
    expect(set.status, set.text).toBe(200)
    try {
      const { client, callSid, conversationId } = await askForSales()
      // The refusal is the agent's answer; the call goes on until the caller hangs up.
      await client.waitFor((c) => c.echoedMarks.length >= 2, 30_000, 'the answer to play')
      await client.silence(500)
      client.hangUp()
      const conv = await completed(conversationId)
      const tool = conv.transcript.find((x: any) => x.turn_type === 'tool')
      expect(tool?.tool, JSON.stringify(conv.transcript)).toMatchObject({
        name: 'transfer_call',
        result: { ok: false, message: 'Sales cannot be reached by transfer from this line.' },
      })
      expect(conv.metrics.end_reason).toBe('caller_hung_up')
      expect(conv.outcome).not.toBe('transferred')
      // Twilio was never asked to dial a leg, nor anything else about this call.
      expect(fake.requests.filter((r) => r.callSid === callSid)).toEqual([])
    } finally {
      const back = await master.patch('/admin/config', { call_countries: null })
      expect(back.status, back.text).toBe(200)
    }

    // The same request with every country allowed: the leg is placed at Twilio (so the refusal above was the rule's).
    const { client, callSid, conversationId } = await askForSales()
    const transfer = await until(
      'the transfer request at Twilio',
      async () => {
        await client.silence(200)
        return transfersOf(callSid)[0] ?? null
      },
      30_000,
    )
    expect(transfer.form.Twiml).toContain(`>${SALES}</Dial>`)
    await client.waitFor((c) => c.closed, 10_000, 'the server to close the stream')
    expect((await completed(conversationId)).metrics.end_reason).toBe('transferred')
  })
})
