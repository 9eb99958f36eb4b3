// SVC_TELEPHONY=twilio against a local fake Twilio (test/helpers/fake-twilio.ts): signed webhooks, TwiML
// answers and the Media Streams WebSocket, on a server of its own; and on the shared (simulated) server the
// Twilio routes do not exist. The calls end to end run the voice session loop with the openai speech
// provider against a fake OpenAI-compatible speech server speaking tone text (test/helpers/fake-speech.ts).
import { request } from 'node:http'
import { verifies } from '../requirements'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { decodeToneText, encodeToneText, toToneAscii } from '~/lib/audio'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import {
  inboundCall,
  parseTwiml,
  postWebhook,
  sid,
  signTwilio,
  startFakeTwilio,
  statusParams,
  TwilioMediaClient,
  type FakeTwilio,
  twilioServerEnv,
} from '../helpers/fake-twilio'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'

/** A raw WebSocket upgrade request: the HTTP status the server answers (101 when it upgrades). */
const upgradeStatus = (origin: string, path: string) =>
  new Promise<number>((ok, fail) => {
    const req = request(`${origin}${path}`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
      },
    })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      ok(res.statusCode ?? 0)
    })
    req.on('response', (res) => {
      res.resume()
      ok(res.statusCode ?? 0)
    })
    req.on('error', fail)
    req.end()
  })

// One server with SVC_TELEPHONY=twilio for the file, and a tenant whose agent (built from a small site)
// answers a number on it: the hooks are at the top (one pair per file, lint/noDuplicateTestHooks).
let fake: FakeTwilio
let server: TestServer
let origin: string
let speech: FakeSpeech
let site: TestSite
let t: Tenant
let agentId: string
const TO = `+1415556${String(1000 + (process.pid % 8000)).padStart(4, '0')}`
const CALLER = '+14155550142'

beforeAll(async () => {
  fake = await startFakeTwilio()
  speech = await startFakeSpeech()
  // An explicit public URL: Twilio signs the URL it calls, and the TwiML names the media URL from it.
  const port = await freePort()
  origin = `http://127.0.0.1:${port}`
  server = await startServer({ env: twilioServerEnv(fake, speech.url, port) })
  site = await serveSite({
    '/': {
      body: html(
        'Quokka Bakery',
        '<h1>Quokka Bakery</h1><p>Quokka Bakery opens every day at seven in the morning.</p>' +
          '<p>Our rye sourdough loaf costs nine dollars.</p>',
      ),
    },
  })
  t = await createTenant(createApi(server.base, server.masterKey))
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  const patched = await t.api.patch(`/agents/${agentId}`, {
    barge_in: true,
    end_call_phrases: ['that is all'],
    capabilities: ['transfer_call'],
    capability_settings: { transfer_directory: [{ name: 'Sales', phone: '+14155550177' }] },
  })
  expect(patched.status, patched.text).toBe(200)
  // Only a number the Twilio account owns is routed (decisions "Numbers").
  fake.own(TO)
  const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId, label: 'Twilio line' })
  expect(num.status, num.text).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
  await speech?.close()
  await site?.close()
})

describe('twilio telephony (own server, fake Twilio)', () => {
  it('refuses a webhook with a wrong, missing or replayed-elsewhere signature (403), asking for no API key', async () => {
    verifies('calls.twilio-signature')
    const params = {
      CallSid: sid('CA'),
      AccountSid: fake.accountSid,
      From: '+14155550100',
      To: '+14155550199',
      CallStatus: 'ringing',
      Direction: 'inbound',
    }
    const voice = `${origin}/telephony/twilio/voice`
    const wrongToken = await postWebhook(voice, params, { authToken: 'not-the-token' })
    expect(wrongToken.status).toBe(403)
    expect(JSON.parse(wrongToken.body).error).toMatchObject({ code: 'forbidden' })
    expect((await postWebhook(voice, params, { authToken: fake.authToken, signature: null })).status).toBe(403)
    // Signed for the status URL, sent to the voice URL.
    const elsewhere = await postWebhook(voice, params, {
      authToken: fake.authToken,
      signedUrl: `${origin}/telephony/twilio/status`,
    })
    expect(elsewhere.status).toBe(403)
    // A tampered field.
    const sig = signTwilio(fake.authToken, voice, params)
    expect(
      (await postWebhook(voice, { ...params, To: '+14155550198' }, { authToken: '', signature: sig })).status,
    ).toBe(403)
    const status = `${origin}/telephony/twilio/status`
    expect((await postWebhook(status, params, { authToken: 'not-the-token' })).status).toBe(403)
  })

  it('answers a signed inbound call with TwiML (a number we do not hold: <Say> then <Hangup/>)', async () => {
    const call = await inboundCall(origin, { from: '+14155550100', to: '+14155550000', authToken: fake.authToken })
    expect(call.status, call.body).toBe(200)
    expect(call.contentType).toMatch(/^text\/xml/)
    expect(call.body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response>/)
    expect(call.twiml.streamUrl).toBeNull()
    expect(call.twiml.say).toBeTruthy()
    expect(call.twiml.hangup).toBe(true)
  })

  it('takes a signed status callback (204) and refuses a wrong content type (415) or a body over 64 KB (413)', async () => {
    const status = `${origin}/telephony/twilio/status`
    const params = statusParams({ callSid: sid('CA'), accountSid: fake.accountSid, status: 'completed', duration: 3 })
    const ok = await postWebhook(status, params, { authToken: fake.authToken })
    expect(ok.status, ok.body).toBe(204)
    const json = await fetch(status, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(json.status).toBe(415)
    const big = await postWebhook(status, { ...params, Junk: 'x'.repeat(70_000) }, { authToken: fake.authToken })
    expect(big.status).toBe(413)
  })

  it('opens the Media Streams WebSocket; a plain GET of it answers 426', async () => {
    const client = await TwilioMediaClient.connect(`${origin.replace(/^http/, 'ws')}/telephony/twilio/media`, {
      callSid: sid('CA'),
      parameters: { conversation_id: 'conv_u1', token: 'not-a-token' },
    })
    expect(client.ws.readyState).toBe(1)
    // The session checks the start parameters: a wrong media token ends the stream.
    await client.waitFor((c) => c.closed, 5_000, 'the server to close a stream with a bad token')
    const plain = await fetch(`${origin}/telephony/twilio/media`)
    expect(plain.status).toBe(426)
  })

  it('closes a media socket that starts no stream within 2 s', async () => {
    const idle = await TwilioMediaClient.connect(`${origin.replace(/^http/, 'ws')}/telephony/twilio/media`, {
      callSid: sid('CA'),
      parameters: {},
      start: false,
    })
    const opened = Date.now()
    await idle.waitFor((c) => c.closed, 8_000, 'the server to close an idle socket')
    expect(Date.now() - opened).toBeGreaterThan(1_500)
    expect(idle.closeCode).toBe(1008)
  }, 20_000)

  it('closes a media socket that sends a message over 64 KB (1009)', async () => {
    verifies('calls.twilio')
    const big = await TwilioMediaClient.connect(`${origin.replace(/^http/, 'ws')}/telephony/twilio/media`, {
      callSid: sid('CA'),
      parameters: {},
      start: false,
    })
    big.ws.send('x'.repeat(100_000))
    await big.waitFor((c) => c.closed, 5_000, 'the server to close an oversized message')
    expect(big.closeCode).toBe(1009)
  })

  describe('a call end to end', () => {
    /** Rings TO, checks the TwiML, opens the stream with its parameters (playback 20× real time unless told). */
    async function call(playbackRate = 20) {
      const rang = await inboundCall(origin, { from: CALLER, to: TO, authToken: fake.authToken })
      expect(rang.status, rang.body).toBe(200)
      expect(rang.twiml.streamUrl).toBe(`${origin.replace(/^http/, 'ws')}/telephony/twilio/media`)
      expect(Object.keys(rang.twiml.parameters).sort()).toEqual(['conversation_id', 'token'])
      const client = await TwilioMediaClient.connect(rang.twiml.streamUrl!, {
        callSid: rang.callSid,
        parameters: rang.twiml.parameters,
        playbackRate,
      })
      return { client, callSid: rang.callSid, conversationId: rang.twiml.parameters.conversation_id }
    }

    /** The caller says `text`, then keeps the line alive with silence (the session's clock is caller audio). */
    async function speak(client: TwilioMediaClient, text: string) {
      await client.say(encodeToneText(text, 8000))
      await client.silence(1_000)
    }

    const heardSoFar = (c: TwilioMediaClient) => c.outgoing.filter((o) => o.event === 'media').length

    const conversation = (id: string) =>
      until(
        `conversation ${id} to complete`,
        async () => {
          const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
          return r.body.status === 'completed' ? r.body : null
        },
        60_000,
      )

    it('greets, hears the caller, answers from the knowledge in μ-law frames, echoes marks; the caller hangs up', async () => {
      verifies('calls.twilio')
      const { client, conversationId } = await call()
      // The greeting arrives as 20 ms frames on this stream, followed by a mark the fake echoes once it has
      // played; the caller speaks after that (no barge-in).
      await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
      const greetingFrames = heardSoFar(client)
      expect(greetingFrames).toBeGreaterThan(1)
      expect(client.outgoing.every((o) => o.event === 'other' || o.streamSid === client.streamSid)).toBe(true)
      const frames = client.outgoing.filter((o) => o.event === 'media') as { pcm: Int16Array }[]
      expect(frames.slice(0, -1).every((f) => f.pcm.length === 160)).toBe(true)
      const greetingAudio = client.audio()
      await speak(client, 'When do you open?')
      await client.waitFor((c) => c.echoedMarks.length >= 2, 30_000, 'the answer to play')
      expect(client.clears).toBe(0)
      client.hangUp()
      const conv = await conversation(conversationId)
      expect(conv).toMatchObject({ channel_detail: { channel: 'phone_inbound' }, agent_id: agentId })
      expect(conv.metrics.end_reason).toBe('caller_hung_up')
      const [greeting, ...rest] = conv.transcript
      expect(greeting).toMatchObject({ speaker: 'agent', turn_type: 'greeting' })
      // What the caller heard is the greeting: the fake TTS speaks tone text, 24 kHz → 8 kHz → μ-law → back.
      expect(decodeToneText(greetingAudio, 8000)).toBe(toToneAscii(greeting.text))
      expect(rest.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.text)).toEqual(['When do you open?'])
      const answer = rest.find((x: any) => x.speaker === 'agent' && x.turn_type === 'answer')
      expect(answer.text.toLowerCase()).toContain('seven')
    })

    it('barge-in: the caller talking over the agent makes the server send clear', async () => {
      verifies('calls.twilio', 'calls.session-rules')
      const { client } = await call(1)
      await client.waitFor((c) => heardSoFar(c) > 0, 15_000, 'the greeting')
      // Real-time playback: the greeting is still playing when the caller speaks over it.
      await speak(client, 'Sorry to interrupt, how much is the rye sourdough loaf?')
      await client.waitFor((c) => c.clears > 0, 15_000, 'a clear message')
      // Twilio echoes the marks of the cleared audio at once.
      expect(client.echoedMarks.length).toBeGreaterThanOrEqual(1)
      client.hangUp()
    })

    it('transfer: asking for Sales updates the live call with <Dial> TwiML (time-limited, its end reported)', async () => {
      verifies('calls.twilio', 'calls.session-rules')
      const { client, callSid, conversationId } = await call()
      await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
      await speak(client, 'Please transfer me to Sales.')
      // The caller's silence keeps the call's clock running while the agent speaks and transfers.
      const transferred = await until(
        'the transfer request at Twilio',
        async () => {
          await client.silence(200)
          return fake.requests.find((r) => r.callSid === callSid && typeof r.form.Twiml === 'string') ?? null
        },
        30_000,
      )
      // The leg ends at the agent's max_call_duration_s (default 1800) and its end comes back to be billed.
      const action = `${origin}/telephony/twilio/status?transfer_of=${conversationId}`.replaceAll('&', '&amp;')
      expect(transferred).toMatchObject({
        authorized: true,
        form: {
          Twiml:
            '<?xml version="1.0" encoding="UTF-8"?><Response>' +
            `<Dial timeLimit="1800" action="${action}" method="POST">+14155550177</Dial></Response>`,
        },
      })
      // The session ends its side of the stream; the conversation closes as transferred.
      await client.waitFor((c) => c.closed, 10_000, 'the server to close the stream')
      expect((await conversation(conversationId)).metrics.end_reason).toBe('transferred')
    })

    it('outbound: POST /calls creates the call at Twilio; its answer request gets <Connect><Stream>; status callbacks end it', async () => {
      verifies('outbound.calls-twilio')
      const before = fake.requests.length
      const placed = await t.api.post('/calls', {
        agent_id: agentId,
        to: '+14155550177',
        role: 'a caller from Quokka Bakery',
        greeting: 'Hello, Quokka Bakery calling about your cake order.',
      })
      expect(placed.status, placed.text).toBe(201)
      expect(placed.body).toMatchObject({ status: 'ringing', from: TO })
      const create = await until(
        'the Calls.json request',
        async () => fake.requests.slice(before).find((r) => r.path.endsWith('/Calls.json')) ?? null,
        10_000,
      )
      const callId = placed.body.call_id
      expect(create.form).toMatchObject({
        To: '+14155550177',
        From: TO,
        Url: `${origin}/telephony/twilio/voice?call_id=${callId}`,
        StatusCallback: `${origin}/telephony/twilio/status?call_id=${callId}`,
        MachineDetection: 'Enable',
      })
      const callSid = create.callSid!
      // Twilio asks what to do once the callee picks up: the media stream, with this call's conversation.
      const answerParams = {
        ...statusParams({ callSid, accountSid: fake.accountSid, status: 'in-progress', answeredBy: 'human' }),
      }
      delete (answerParams as Record<string, string>).CallbackSource
      const answer = await postWebhook(String(create.form.Url), answerParams, { authToken: fake.authToken })
      expect(answer.status, answer.body).toBe(200)
      const twiml = parseTwiml(answer.body)
      expect(twiml.streamUrl).toBe(`${origin.replace(/^http/, 'ws')}/telephony/twilio/media`)
      const conversationId = twiml.parameters.conversation_id
      expect((await t.api.get(`/calls/${callId}`)).body).toMatchObject({
        status: 'in_progress',
        conversation_id: conversationId,
      })
      const client = await TwilioMediaClient.connect(twiml.streamUrl!, {
        callSid,
        parameters: twiml.parameters,
        playbackRate: 20,
      })
      await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
      client.hangUp()
      const conv = await conversation(conversationId)
      expect(conv.channel_detail).toMatchObject({ channel: 'phone_outbound' })
      expect(conv.transcript[0].text).toBe('Hello, Quokka Bakery calling about your cake order.')
      const status = String(create.form.StatusCallback)
      const done = statusParams({ callSid, accountSid: fake.accountSid, status: 'completed', duration: 4 })
      expect((await postWebhook(status, done, { authToken: fake.authToken })).status).toBe(204)
      const call = await until(
        'the call to complete',
        async () => {
          const r = await t.api.get(`/calls/${callId}`)
          return r.body.status === 'completed' ? r.body : null
        },
        10_000,
      )
      expect(call).toMatchObject({ outcome: 'answered', conversation_id: conversationId })

      // A call nobody answers: Twilio's no-answer callback.
      const second = await t.api.post('/calls', { agent_id: agentId, to: '+14155550178', role: 'a caller' })
      const req2 = await until(
        'the second Calls.json request',
        async () => fake.requests.find((r) => r.path.endsWith('/Calls.json') && r.form.To === '+14155550178') ?? null,
        10_000,
      )
      const na = statusParams({ callSid: req2.callSid!, accountSid: fake.accountSid, status: 'no-answer' })
      expect((await postWebhook(String(req2.form.StatusCallback), na, { authToken: fake.authToken })).status).toBe(204)
      expect((await t.api.get(`/calls/${second.body.call_id}`)).body).toMatchObject({ status: 'no_answer' })
    })

    it('an end phrase: the agent says goodbye, then hangs up through the REST API', async () => {
      verifies('calls.twilio', 'calls.session-rules')
      const { client, callSid, conversationId } = await call()
      await client.waitFor((c) => c.echoedMarks.length >= 1, 15_000, 'the greeting to play')
      await speak(client, 'Thanks, that is all.')
      const hung = await until(
        'the hang-up at Twilio',
        async () => {
          await client.silence(200)
          return fake.requests.find((r) => r.callSid === callSid && r.form.Status === 'completed') ?? null
        },
        30_000,
      )
      expect(hung).toMatchObject({ method: 'POST', authorized: true, form: { Status: 'completed' } })
      await client.waitFor((c) => c.closed, 10_000, 'the server to close the stream')
      expect((await conversation(conversationId)).metrics.end_reason).toBe('end_phrase')
    })
  })
})

describe('twilio routes when SVC_TELEPHONY is not twilio (shared server)', () => {
  const origin = inject('origin')

  it('answer 404 not_found: webhooks, the media URL and its WebSocket upgrade', async () => {
    for (const path of ['/telephony/twilio/voice', '/telephony/twilio/status']) {
      const r = await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'CallSid=CA1',
      })
      expect(r.status, path).toBe(404)
      expect((await r.json()).error).toMatchObject({ code: 'not_found' })
    }
    expect((await fetch(`${origin}/telephony/twilio/media`)).status).toBe(404)
    expect(await upgradeStatus(origin, '/telephony/twilio/media')).toBe(404)
  })

  it('refuse a WebSocket upgrade on every path that is not a media stream', async () => {
    verifies('calls.twilio')
    for (const path of ['/v1/health', '/nope', '/v1/conversations', '/mcp', '/telephony/twilio/voice'])
      expect(await upgradeStatus(origin, path), path).toBe(404)
  })
})
