// The telephony contract on both providers (simulated, twilio), then what is Twilio's own: its status and
// answering-machine mapping, its Media Streams framing and μ-law, and its REST Calls API against a local
// fake Twilio (test/helpers/fake-twilio.ts). No server, no network.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import simulated, {
  base64ToPcm,
  pcmToBase64,
  SIGNATURE_HEADER,
  signSimulated,
} from '../../providers/telephony/simulated'
import twilio, { xmlEscape } from '../../providers/telephony/twilio'
import { testTelephony, tone } from '../contract/telephony.contract'
import {
  decodeOutgoing,
  inboundParams,
  signTwilio,
  startFakeTwilio,
  statusParams,
  twilioWire,
  type FakeTwilio,
} from '../helpers/fake-twilio'

const ORIGIN = 'https://calls.example.com'
const ACCOUNT = 'AC' + 'a'.repeat(32)
const saved = { ...process.env }
// The provider reads its settings at call time: set before the suites run, restored after.
process.env.TWILIO_ACCOUNT_SID = ACCOUNT
process.env.TWILIO_AUTH_TOKEN = 'contract-token-1234567890'
afterAll(() => {
  process.env = saved
})

describe('providers/telephony/simulated.ts', () =>
  testTelephony(simulated, {
    sign: (url, params) => ({ [SIGNATURE_HEADER]: signSimulated(url, params) }),
    inbound: (c) => ({
      url: `${ORIGIN}/telephony/simulated/voice`,
      params: { Event: 'inbound', CallId: c.providerCallId, From: c.from, To: c.to },
    }),
    completed: (c) => ({
      url: `${ORIGIN}/telephony/simulated/status`,
      params: {
        Event: 'status',
        CallId: c.providerCallId,
        Status: 'completed',
        Duration: String(c.durationS),
        AnsweredBy: 'machine',
      },
    }),
    escape: (s) => JSON.stringify(s).slice(1, -1),
    wire: {
      start: (s) =>
        JSON.stringify({ event: 'start', call_id: s.providerCallId, stream_id: s.streamId, params: s.params }),
      audio: (pcm) => JSON.stringify({ event: 'media', pcm: pcmToBase64(pcm) }),
      mark: (name) => JSON.stringify({ event: 'mark', name }),
      dtmf: (digit) => JSON.stringify({ event: 'dtmf', digit }),
      stop: () => JSON.stringify({ event: 'stop' }),
      noise: [],
      decodeOutgoing: (message) => {
        const m = JSON.parse(message)
        if (m.event === 'media') return { type: 'audio', pcm: base64ToPcm(m.pcm) }
        if (m.event === 'mark') return { type: 'mark', name: m.name }
        if (m.event === 'clear') return { type: 'clear' }
        return { type: 'other' }
      },
    },
    minSnrDb: 90,
  }))

const twilioWireHooks = {
  start: (s: { providerCallId: string; streamId: string; params: Record<string, string> }) =>
    twilioWire.start({ streamSid: s.streamId, callSid: s.providerCallId, params: s.params }),
  audio: (pcm: Int16Array) => twilioWire.media('MZ1', pcm),
  mark: (name: string) => twilioWire.mark('MZ1', name),
  dtmf: (digit: string) => twilioWire.dtmf('MZ1', digit),
  stop: () => twilioWire.stop('MZ1', 'CA1'),
  noise: [twilioWire.connected()],
  decodeOutgoing: (message: string) => {
    const o = decodeOutgoing(message)
    if (o.event === 'media') return { type: 'audio' as const, pcm: o.pcm }
    if (o.event === 'mark') return { type: 'mark' as const, name: o.name }
    if (o.event === 'clear') return { type: 'clear' as const }
    return { type: 'other' as const }
  },
}

describe('providers/telephony/twilio.ts', () =>
  testTelephony(twilio, {
    sign: (url, params) => ({ 'x-twilio-signature': signTwilio(process.env.TWILIO_AUTH_TOKEN!, url, params) }),
    inbound: (c) => ({
      url: `${ORIGIN}/telephony/twilio/voice`,
      params: inboundParams({ callSid: c.providerCallId, accountSid: ACCOUNT, from: c.from, to: c.to }),
    }),
    completed: (c) => ({
      url: `${ORIGIN}/telephony/twilio/status`,
      params: statusParams({
        callSid: c.providerCallId,
        accountSid: ACCOUNT,
        status: 'completed',
        duration: c.durationS,
        answeredBy: 'machine_end_beep',
      }),
    }),
    escape: xmlEscape,
    wire: twilioWireHooks,
    // G.711 μ-law: about 38 dB on a half-scale tone.
    minSnrDb: 30,
  }))

describe('twilio: webhooks', () => {
  const status = (s: string, extra: Record<string, string> = {}, path = 'status') =>
    twilio.parseWebhook({
      url: `${ORIGIN}/telephony/twilio/${path}`,
      headers: {},
      params: { CallSid: 'CA1', CallStatus: s, Direction: 'outbound-api', ...extra },
    })

  it('maps every CallStatus to the contract states', () => {
    const want: Record<string, string> = {
      queued: 'queued',
      initiated: 'queued',
      ringing: 'ringing',
      'in-progress': 'in_progress',
      completed: 'completed',
      busy: 'no_answer',
      'no-answer': 'no_answer',
      failed: 'failed',
      canceled: 'canceled',
    }
    for (const [s, state] of Object.entries(want)) expect(status(s), s).toMatchObject({ type: 'status', state })
    expect(status('exploded')).toEqual({ type: 'ignored' })
    expect(twilio.parseWebhook({ url: `${ORIGIN}/telephony/twilio/status`, headers: {}, params: {} })).toEqual({
      type: 'ignored',
    })
  })

  it('reads CallDuration and AnsweredBy (machine_*, fax → machine; unknown → null)', () => {
    expect(status('completed', { CallDuration: '17', AnsweredBy: 'human' })).toMatchObject({
      durationS: 17,
      answeredBy: 'human',
    })
    for (const a of ['machine_start', 'machine_end_silence', 'machine_end_other', 'fax'])
      expect(status('completed', { AnsweredBy: a }), a).toMatchObject({ answeredBy: 'machine' })
    expect(status('completed', { AnsweredBy: 'unknown', CallDuration: 'x' })).toMatchObject({
      durationS: null,
      answeredBy: null,
    })
  })

  it('tells the voice webhook from a status callback: the /status URL, then the params', () => {
    const ringing = { CallSid: 'CA2', CallStatus: 'ringing', Direction: 'inbound', From: '+1415', To: '+1416' }
    const at = (path: string, params: Record<string, string>) =>
      twilio.parseWebhook({ url: `${ORIGIN}/telephony/twilio/${path}`, headers: {}, params })
    expect(at('voice', ringing)).toEqual({ type: 'inbound', providerCallId: 'CA2', from: '+1415', to: '+1416' })
    // An inbound call's own status callback is a status, on the status URL or marked by CallbackSource.
    expect(at('status', ringing)).toMatchObject({ type: 'status', state: 'ringing' })
    expect(at('voice', { ...ringing, CallbackSource: 'call-progress-events' })).toMatchObject({ type: 'status' })
    expect(at('voice', { ...ringing, CallStatus: 'completed' })).toMatchObject({ type: 'status', state: 'completed' })
    // The answer request of an outbound call is not an inbound call.
    expect(at('voice', { ...ringing, Direction: 'outbound-api', CallStatus: 'in-progress' })).toMatchObject({
      type: 'status',
      state: 'in_progress',
    })
  })

  it("reads a transfer's <Dial action> request as the end of the leg, with its DialCallDuration", () => {
    const action = (extra: Record<string, string>) =>
      twilio.parseWebhook({
        url: `${ORIGIN}/telephony/twilio/status?transfer_of=conv_u1`,
        headers: {},
        params: { CallSid: 'CA4', CallStatus: 'in-progress', Direction: 'inbound', DialCallSid: 'CA5', ...extra },
      })
    expect(action({ DialCallStatus: 'completed', DialCallDuration: '75' })).toEqual({
      type: 'transfer_ended',
      providerCallId: 'CA4',
      durationS: 75,
    })
    expect(action({ DialCallStatus: 'no-answer' })).toMatchObject({ type: 'transfer_ended', durationS: 0 })
    expect(action({ DialCallStatus: 'completed', DialCallDuration: '-3' })).toMatchObject({ durationS: 0 })
  })

  it('verifies with the auth token read at call time; none configured → false', () => {
    const url = `${ORIGIN}/telephony/twilio/voice?x=a%20b`
    const params = { CallSid: 'CA3', From: "O'Brien <a&b>" }
    const headers = { 'x-twilio-signature': signTwilio(process.env.TWILIO_AUTH_TOKEN!, url, params) }
    expect(twilio.verifyWebhook({ url, headers, params })).toBe(true)
    const token = process.env.TWILIO_AUTH_TOKEN
    process.env.TWILIO_AUTH_TOKEN = ''
    try {
      expect(twilio.verifyWebhook({ url, headers, params })).toBe(false)
    } finally {
      process.env.TWILIO_AUTH_TOKEN = token
    }
    expect(twilio.verifyWebhook({ url: 'not a url', headers, params })).toBe(false)
  })

  it('answers TwiML: <Connect><Stream> with Parameters, or <Say> then <Hangup/>', () => {
    const connect = twilio.answerInbound({
      kind: 'connect',
      mediaUrl: 'wss://calls.example.com/telephony/twilio/media',
      params: { conversation_id: 'conv_u1', token: 'x&y' },
    })
    expect(connect).toEqual({
      contentType: 'text/xml',
      body:
        '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://calls.example.com/telephony/twilio/media">' +
        '<Parameter name="conversation_id" value="conv_u1"/><Parameter name="token" value="x&amp;y"/></Stream></Connect></Response>',
    })
    expect(twilio.answerInbound({ kind: 'refuse', message: 'Closed <now> & "bye"' }).body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Closed &lt;now&gt; &amp; &quot;bye&quot;</Say><Hangup/></Response>',
    )
  })
})

describe('twilio: media streams', () => {
  it('every outgoing message names the stream from start; audio goes in 20 ms frames of 160 bytes', () => {
    const sent: string[] = []
    const leg = twilio.openMedia({ send: (m) => void sent.push(m), close() {} })
    leg.receive(twilioWire.start({ streamSid: 'MZabc', callSid: 'CAabc', params: {} }))
    leg.play(tone(500, 8000))
    leg.mark('m')
    leg.clear()
    const msgs = sent.map((m) => JSON.parse(m))
    expect(msgs.every((m) => m.streamSid === 'MZabc')).toBe(true)
    const sizes = msgs.filter((m) => m.event === 'media').map((m) => Buffer.from(m.media.payload, 'base64').length)
    expect(sizes).toEqual([160, 160, 160, 20])
    expect(msgs.slice(-2)).toEqual([
      { event: 'mark', streamSid: 'MZabc', mark: { name: 'm' } },
      { event: 'clear', streamSid: 'MZabc' },
    ])
  })

  it('ignores an outbound-track media message', () => {
    const leg = twilio.openMedia({ send() {}, close() {} })
    const m = JSON.parse(twilioWire.media('MZ1', tone(160, 8000)))
    m.media.track = 'outbound'
    expect(leg.receive(JSON.stringify(m))).toBeNull()
  })
})

describe('twilio: REST Calls API (fake Twilio)', () => {
  let fake: FakeTwilio
  beforeAll(async () => {
    fake = await startFakeTwilio({ accountSid: ACCOUNT, authToken: 'rest-token-abcdef0123456789' })
  })
  afterAll(() => fake?.close())
  const withFake = async <T>(fn: () => Promise<T>) => {
    const before = { ...process.env }
    process.env.TWILIO_API_BASE_URL = fake.url + '/'
    process.env.TWILIO_AUTH_TOKEN = fake.authToken
    try {
      return await fn()
    } finally {
      process.env.TWILIO_API_BASE_URL = before.TWILIO_API_BASE_URL
      process.env.TWILIO_AUTH_TOKEN = before.TWILIO_AUTH_TOKEN
    }
  }

  it('placeCall creates the call (form, Basic auth, status events, AMD, time limit) and answers its sid', async () => {
    const placed = await withFake(() =>
      twilio.placeCall({
        callId: 'call_1',
        from: '+14155550100',
        to: '+14155550111',
        maxDurationS: 600,
        statusUrl: `${ORIGIN}/telephony/twilio/status?call_id=call_1`,
        answerUrl: `${ORIGIN}/telephony/twilio/voice?call_id=call_1`,
      }),
    )
    const req = fake.requests.at(-1)!
    expect(placed.providerCallId).toBe(req.callSid)
    expect(placed.providerCallId).toMatch(/^CA[0-9a-f]{32}$/)
    expect(req).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json`, authorized: true })
    expect(req.form).toEqual({
      To: '+14155550111',
      From: '+14155550100',
      Url: `${ORIGIN}/telephony/twilio/voice?call_id=call_1`,
      Method: 'POST',
      StatusCallback: `${ORIGIN}/telephony/twilio/status?call_id=call_1`,
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      MachineDetection: 'Enable',
      TimeLimit: '600',
    })
  })

  it('hangUp completes the call; transfer gives it <Dial> TwiML', async () => {
    await withFake(() => twilio.hangUp('CA' + 'b'.repeat(32)))
    expect(fake.requests.at(-1)).toMatchObject({
      path: `/2010-04-01/Accounts/${ACCOUNT}/Calls/CA${'b'.repeat(32)}.json`,
      form: { Status: 'completed' },
      authorized: true,
    })
    const statusUrl = `${ORIGIN}/telephony/twilio/status?transfer_of=conv_u1&x=1`
    await withFake(() => twilio.transfer('CA' + 'c'.repeat(32), '+14155550123', { maxDurationS: 300, statusUrl }))
    expect(fake.requests.at(-1)).toMatchObject({
      path: `/2010-04-01/Accounts/${ACCOUNT}/Calls/CA${'c'.repeat(32)}.json`,
      form: {
        Twiml:
          '<?xml version="1.0" encoding="UTF-8"?><Response>' +
          `<Dial timeLimit="300" action="${statusUrl.replace('&', '&amp;')}" method="POST">+14155550123</Dial></Response>`,
      },
    })
  })

  it('ownsNumber looks the number up in IncomingPhoneNumbers and wants it exactly', async () => {
    fake.own('+14155550199')
    expect(await withFake(() => twilio.ownsNumber!('+14155550199'))).toBe(true)
    const req = fake.requests.at(-1)!
    expect(req).toMatchObject({ method: 'GET', authorized: true })
    expect(req.path).toMatch(new RegExp(`^/2010-04-01/Accounts/${ACCOUNT}/IncomingPhoneNumbers\\.json\\?`))
    expect(new URL(req.path, fake.url).searchParams.get('PhoneNumber')).toBe('+14155550199')
    // Twilio's filter matches partial numbers: a longer owned number is not this one.
    expect(await withFake(() => twilio.ownsNumber!('+1415555019'))).toBe(false)
    expect(await withFake(() => twilio.ownsNumber!('+14155550198'))).toBe(false)
  })

  it("errors carry the HTTP status and Twilio's message, never the auth token", async () => {
    fake.failNext(400, { code: 21211, message: "The 'To' number +1999 is not a valid phone number.", status: 400 })
    const err = await withFake(() =>
      twilio.placeCall({
        callId: 'c',
        from: '+14155550100',
        to: '+1999',
        maxDurationS: 60,
        statusUrl: ORIGIN,
        answerUrl: ORIGIN,
      }),
    ).catch((e: Error) => e)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toContain('HTTP 400')
    expect((err as Error).message).toContain("The 'To' number +1999 is not a valid phone number.")
    expect((err as Error).message).toContain('21211')
    expect((err as Error).message).not.toContain(fake.authToken)

    // Wrong credentials: Twilio's 401.
    const before = process.env.TWILIO_AUTH_TOKEN
    process.env.TWILIO_API_BASE_URL = fake.url
    process.env.TWILIO_AUTH_TOKEN = 'wrong-token-000'
    try {
      const e401 = await twilio.hangUp('CA' + 'd'.repeat(32)).catch((e: Error) => e)
      expect((e401 as Error).message).toMatch(/HTTP 401: Authenticate/)
      expect((e401 as Error).message).not.toContain('wrong-token-000')
    } finally {
      process.env.TWILIO_AUTH_TOKEN = before
      delete process.env.TWILIO_API_BASE_URL
    }
  })

  it('refuses locally without credentials or a From number; an unreachable API fails without the token', async () => {
    const before = { ...process.env }
    try {
      process.env.TWILIO_AUTH_TOKEN = ''
      await expect(twilio.hangUp('CA1')).rejects.toThrow(/TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN/)
      process.env.TWILIO_AUTH_TOKEN = 'secret-token-xyz'
      await expect(
        twilio.placeCall({ callId: 'c', from: null, to: '+1', maxDurationS: 1, statusUrl: ORIGIN, answerUrl: ORIGIN }),
      ).rejects.toThrow(/From number/)
      process.env.TWILIO_API_BASE_URL = 'http://127.0.0.1:9' // discard port: connection refused
      const err = await twilio.hangUp('CA1').catch((e: Error) => e)
      expect((err as Error).message).toMatch(/^twilio hangUp failed/)
      expect((err as Error).message).not.toContain('secret-token-xyz')
    } finally {
      process.env.TWILIO_AUTH_TOKEN = before.TWILIO_AUTH_TOKEN
      if (before.TWILIO_API_BASE_URL === undefined) delete process.env.TWILIO_API_BASE_URL
      else process.env.TWILIO_API_BASE_URL = before.TWILIO_API_BASE_URL
    }
  })
})
