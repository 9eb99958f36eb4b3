// Issue 30, "Voice sessions end" and "Widget abuse" (decisions Security rules), on a server of its own: it
// changes the operator config (the shared server's never changes), runs SVC_TELEPHONY=twilio for the media
// socket route and lowers the voice-chat ceiling with the test-only SVC_VOICE_CHAT_MAX_SECONDS (12 s instead
// of 10 minutes). Browsers are Node WebSockets (test/helpers/voice-chat.ts); every client names its own
// address in X-Forwarded-For (the test runner is a trusted proxy: loopback).
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { refused, VOICE_RATE, VoiceChatClient, type Refused } from '../helpers/voice-chat'
import { sleep, until } from '../helpers/wait'
import { openWidget } from '../helpers/widget'
import { verifies } from '../requirements'
import { VOICE_CHAT_MAX_SECONDS } from '~/config'
import { WALL_SLACK_S, wallCeilingS } from '~/domain/calls/ceiling'
import { ipLimitKey } from '~/lib/ip'

const ORIGIN = 'https://shop.example.com'
const CEILING_S = 12

let server: TestServer
let master: Api
let site: TestSite
/** Tenant t: agents A (voice) and B (the daily caps); tenant u: agent C (the account cap, High 1). */
let t: Tenant
let u: Tenant
const agents = { a: '', b: '', c: '' }
const tokens = { a: '', b: '', c: '' }

let ipSeq = 0
const freshIp = () => `203.0.113.${(++ipSeq % 250) + 1}`

beforeAll(async () => {
  site = await serveBakery('Quokka Bakery', 'Fremantle')
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  server = await startServer({
    env: {
      PORT: String(port),
      SVC_PUBLIC_URL: origin,
      SVC_TELEPHONY: 'twilio',
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'fake-auth-token',
      TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
      SVC_VOICE_CHAT_MAX_SECONDS: String(CEILING_S),
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000',
    },
  })
  master = createApi(server.base, server.masterKey)
  t = await createTenant(master)
  u = await createTenant(master)
  const build = (x: Tenant) => buildAgent(x.api, x.accountId, `${site.origin}/`, { language: 'en' })
  ;[agents.a, agents.b, agents.c] = await Promise.all([build(t), build(t), build(u)])
  tokens.a = await openWidget(t.api, agents.a, { allowed_domains: ['shop.example.com'] })
  tokens.b = await openWidget(t.api, agents.b, { allowed_domains: ['shop.example.com'] })
  tokens.c = await openWidget(u.api, agents.c, { allowed_domains: ['shop.example.com'] })
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await site?.close()
})

const voiceUrl = (token: string) =>
  `${server.origin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(token)}`

const connect = (token: string, opts: { ip?: string; echoMarks?: boolean } = {}) =>
  VoiceChatClient.connect(voiceUrl(token), { origin: ORIGIN, 'x-forwarded-for': opts.ip ?? freshIp() }, opts)

/** A voice chat told to stream (`ready`); it sends a first silent frame at once, as a browser's microphone does. */
async function live(token: string, opts: { ip?: string; echoMarks?: boolean; quiet?: boolean } = {}) {
  const c = await connect(token, opts)
  if (refused(c)) throw new Error(`refused: ${JSON.stringify(c)}`)
  await c.waitFor((x) => x.of('ready').length === 1 || x.closed, 15_000, 'ready')
  if (!c.closed && !opts.quiet) c.ws.send(Buffer.alloc(VOICE_RATE / 5))
  return c
}

const convOf = (c: VoiceChatClient) => String(c.of('ready')[0]?.conversation_id)

const completed = (api: Api, id: string, timeoutMs = 30_000) =>
  until(
    `conversation ${id} to complete`,
    async () => {
      const r = await api.get(`/conversations/${id}?include=metrics`)
      return r.body.status === 'completed' ? r.body : null
    },
    timeoutMs,
  )

/** Streams silence in real time (100 ms frames) until the socket closes or `ms` have passed. */
async function silenceUntilClosed(c: VoiceChatClient, ms: number) {
  const frame = Buffer.alloc((VOICE_RATE / 10) * 2)
  const until = Date.now() + ms
  while (!c.closed && Date.now() < until) {
    if (c.ws.readyState === WebSocket.OPEN) c.ws.send(frame)
    await sleep(100)
  }
}

/** A raw Twilio media socket from `ip` that never sends `start`: open (with its close) or the upgrade's refusal. */
function mediaSocket(ip: string) {
  return new Promise<{ ws: WebSocket; closed: Promise<{ code: number; at: number }> } | Refused>((resolve, reject) => {
    const ws = new WebSocket(`${server.origin.replace(/^http/, 'ws')}/telephony/twilio/media`, {
      headers: { 'x-forwarded-for': ip },
    })
    const closed = new Promise<{ code: number; at: number }>((done) =>
      ws.on('close', (code) => done({ code, at: Date.now() })),
    )
    ws.on('open', () => resolve({ ws, closed }))
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (ch: Buffer) => chunks.push(ch))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null })
      })
    })
    ws.on('error', (err) => reject(err))
  })
}
const isRefusal = (x: Awaited<ReturnType<typeof mediaSocket>>): x is Refused => 'status' in x

describe('the decisions, without a server (issue 30)', () => {
  it('a voice chat lasts 10 minutes in all; a call its max_call_duration_s plus the slack', () => {
    verifies('abuse.voice.chat-ceiling')
    expect(VOICE_CHAT_MAX_SECONDS).toBe(600)
    const chat = { channel: 'voice_chat', voiceChatMaxS: VOICE_CHAT_MAX_SECONDS }
    expect(wallCeilingS({ ...chat, maxCallS: 1_800 })).toBe(600)
    expect(wallCeilingS({ ...chat, maxCallS: 1_800, reservedS: 90 })).toBe(90)
    expect(wallCeilingS({ ...chat, maxCallS: 30 })).toBe(30 + WALL_SLACK_S)
    expect(wallCeilingS({ channel: 'phone_inbound', voiceChatMaxS: 600, maxCallS: 1_800 })).toBe(1_800 + WALL_SLACK_S)
  })

  it('per-IP keys: IPv4 as is, IPv4-mapped as IPv4, IPv6 by its /64', () => {
    verifies('abuse.widget.ipv6-per-ip')
    expect(ipLimitKey('203.0.113.7')).toBe('203.0.113.7')
    expect(ipLimitKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(ipLimitKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(ipLimitKey('2001:DB8:1:2::9')).toBe('2001:db8:1:2::/64')
    expect(ipLimitKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(ipLimitKey('::1')).toBe('0:0:0:0::/64')
    expect(ipLimitKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64')
    expect(ipLimitKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(ipLimitKey('unknown')).toBe('unknown')
  })
})

describe('voice sessions end (issue 30)', () => {
  it('a voice chat that never echoes marks, recording off, ends by its silence timeout and is billed no more than its duration', async () => {
    verifies('abuse.voice.clock-without-marks')
    const patched = await u.api.patch(`/agents/${agents.c}`, { silence_timeout_s: 2, record_calls: false })
    expect(patched.status, patched.text).toBe(200)
    const from = new Date(Date.now() - 1000).toISOString()
    const c = await live(tokens.c, { echoMarks: false })
    const openedAt = Date.now()
    // The agent's audio "plays" on the visitor's clock: the greeting, 2 s of silence, the closing line.
    await silenceUntilClosed(c, 40_000)
    const wallS = (Date.now() - openedAt) / 1000
    expect(c.closed).toBe(true)
    expect(c.of('mark').length).toBeGreaterThan(0)
    expect(c.of('end')).toEqual([{ type: 'end', reason: 'silence_timeout' }])
    const conv = await completed(u.api, convOf(c))
    expect(conv.metrics.end_reason).toBe('silence_timeout')
    expect(conv.metrics.duration_s).toBeLessThanOrEqual(Math.ceil(wallS) + 1)
    const to = new Date(Date.now() + 60_000).toISOString()
    const usage = await u.api.get(
      `/accounts/${u.accountId}/usage?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&group_by=channel`,
    )
    expect(usage.status, usage.text).toBe(200)
    const row = usage.body.data.find((r: any) => r.channel === 'voice_chat')
    expect(row).toMatchObject({ conversations: 1, voice_seconds: conv.metrics.duration_s })
    expect(row.voice_seconds).toBeLessThanOrEqual(Math.ceil(wallS) + 1)
    // Nothing was asked, so no tokens: the cost is the voice price of those seconds at most.
    expect(row.cost_usd).toBeLessThanOrEqual(((Math.ceil(wallS) + 1) / 60) * 0.05 + 1e-9)
    await u.api.patch(`/agents/${agents.c}`, { silence_timeout_s: null })
  }, 60_000)

  it('a voice chat ends at its ceiling on the wall clock, whether it streams audio or sends none', async () => {
    verifies('abuse.voice.chat-ceiling')
    // No silence timeout before the ceiling.
    expect((await t.api.patch(`/agents/${agents.a}`, { silence_timeout_s: 300 })).status).toBe(200)
    const streaming = await live(tokens.a)
    const mute = await live(tokens.a) // echoes marks, never sends audio after its first frame
    const startedAt = Date.now()
    await Promise.all([silenceUntilClosed(streaming, 40_000), mute.waitFor((x) => x.closed, 40_000, 'the close')])
    const tookS = (Date.now() - startedAt) / 1000
    // The ceiling, then the closing line is given up to 10 s to play.
    expect(tookS).toBeGreaterThan(CEILING_S - 2)
    expect(tookS).toBeLessThan(CEILING_S + 15)
    for (const c of [streaming, mute]) {
      expect(c.of('end')).toEqual([{ type: 'end', reason: 'max_duration' }])
      expect(c.closeCode).toBe(1000)
      const conv = await completed(t.api, convOf(c))
      expect(conv.metrics.end_reason).toBe('max_duration')
    }
    await t.api.patch(`/agents/${agents.a}`, { silence_timeout_s: null })
  }, 60_000)

  it('closes media sockets that start no stream within 2 s; one address (an IPv6 /64) holds at most 20 unstarted', async () => {
    verifies('abuse.voice.unstarted-sockets')
    // Twilio media sockets from two addresses of one IPv6 /64: they count together.
    const ips = ['2001:db8:30:1::a', '2001:db8:30:1:ffff:ffff:ffff:b']
    const opened: { ws: WebSocket; closed: Promise<{ code: number; at: number }>; at: number }[] = []
    for (let i = 0; i < 20; i++) {
      const s = await mediaSocket(ips[i % 2])
      if (isRefusal(s)) throw new Error(`refused at ${i}: ${JSON.stringify(s)}`)
      opened.push({ ...s, at: Date.now() })
    }
    const over = await mediaSocket('2001:db8:30:1::c')
    expect(isRefusal(over) && over.status).toBe(429)
    if (isRefusal(over)) {
      expect(over.body.error.code).toBe('rate_limited')
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    }
    // Another client is not held back.
    const other = await mediaSocket('2001:db8:31:1::a')
    expect(isRefusal(other)).toBe(false)
    // Each is closed about 2 s after it opened (not 10 s as before).
    for (const s of opened) {
      const { code, at } = await s.closed
      expect(code).toBe(1008)
      expect(at - s.at).toBeGreaterThan(1_500)
      expect(at - s.at).toBeLessThan(4_500)
    }
    if (!isRefusal(other)) expect((await other.closed).code).toBe(1008)
    // Closed, they no longer count.
    const again = await mediaSocket(ips[0])
    expect(isRefusal(again)).toBe(false)
    if (!isRefusal(again)) again.ws.close()

    // A browser voice chat that sends nothing after `ready` is closed 2 s later; its conversation ends.
    const idle = await live(tokens.a, { echoMarks: false, quiet: true })
    const readyAt = Date.now()
    await idle.waitFor((x) => x.closed, 8_000, 'the close of an idle voice chat')
    expect(idle.closeCode).toBe(1008)
    expect(Date.now() - readyAt).toBeLessThan(5_000)
    expect((await completed(t.api, convOf(idle))).status).toBe('completed')
  }, 60_000)

  it('one account holds at most 20 voice chats at once: the next is closed with 1013 and opens nothing', async () => {
    verifies('abuse.voice.account-cap')
    const chats = await Promise.all(Array.from({ length: 20 }, () => live(tokens.c)))
    try {
      for (const c of chats) expect(c.of('ready'), JSON.stringify(c.messages)).toHaveLength(1)
      const busy = await connect(tokens.c)
      expect(refused(busy)).toBe(false)
      if (!refused(busy)) {
        await busy.waitFor((x) => x.closed, 10_000, 'the close of the 21st')
        expect(busy.closeCode).toBe(1013)
        expect(busy.of('ready')).toHaveLength(0)
      }
      const open = await u.api.get(
        `/conversations?channel=voice_chat&status=in_progress&agent_id=${agents.c}&limit=100`,
      )
      expect(open.body.data).toHaveLength(20)
      // One ends: a new one is admitted.
      chats[0].stop()
      await completed(u.api, convOf(chats[0]))
      const next = await live(tokens.c)
      expect(next.of('ready')).toHaveLength(1)
      next.close()
    } finally {
      for (const c of chats) c.close()
    }
    await until(
      'no voice chat of tenant u in progress',
      async () => {
        const r = await u.api.get(`/conversations?channel=voice_chat&status=in_progress&agent_id=${agents.c}`)
        return r.status === 200 && r.body.data.length === 0
      },
      30_000,
    )
  }, 60_000)
})

describe('widget abuse (issue 30)', () => {
  const widgetPost = (token: string, ip = freshIp()) =>
    fetch(`${server.base}/widget/conversations`, {
      method: 'POST',
      headers: {
        'x-svc-widget-token': token,
        origin: ORIGIN,
        'x-forwarded-for': ip,
        'content-type': 'application/json',
      },
      body: '{}',
    })

  it('caps widget conversations per agent per day (widget_conversations_per_day in /admin/config): 429 quota_exceeded', async () => {
    verifies('abuse.widget.conversations-per-day')
    const shown = await master.get('/admin/config')
    expect(shown.status, shown.text).toBe(200)
    expect(shown.body).toMatchObject({
      widget_conversations_per_day: 2000,
      voice_chat_minutes_per_day: 600,
      overrides: { widget_conversations_per_day: null, voice_chat_minutes_per_day: null },
    })
    for (const bad of [0, 1.5, '3', 1_000_001]) {
      const r = await master.patch('/admin/config', { widget_conversations_per_day: bad })
      expect(r.status, JSON.stringify(bad)).toBe(400)
      expect(r.body.error).toMatchObject({ code: 'validation_error', field: 'widget_conversations_per_day' })
    }
    const set = await master.patch('/admin/config', { widget_conversations_per_day: 2 })
    expect(set.status, set.text).toBe(200)
    expect(set.body).toMatchObject({ widget_conversations_per_day: 2, overrides: { widget_conversations_per_day: 2 } })
    try {
      // Agent A may already have some today: fill its two, then the next is refused.
      let last = await widgetPost(tokens.a)
      for (let i = 0; i < 3 && last.status === 201; i++) last = await widgetPost(tokens.a)
      expect(last.status).toBe(429)
      const body = await last.json()
      expect(body.error.code).toBe('quota_exceeded')
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0)
      // Readable by the page: the Origin was admitted.
      expect(last.headers.get('access-control-allow-origin')).toBe(ORIGIN)
      // Per agent: agent B of the same account still starts conversations.
      expect((await widgetPost(tokens.b)).status).toBe(201)
    } finally {
      const cleared = await master.patch('/admin/config', { widget_conversations_per_day: null })
      expect(cleared.body.widget_conversations_per_day).toBe(2000)
    }
    expect((await widgetPost(tokens.a)).status).toBe(201)
  })

  it('caps voice-chat minutes per agent per day (voice_chat_minutes_per_day): reserved at open, the unused returned', async () => {
    verifies('abuse.widget.voice-minutes')
    const bad = await master.patch('/admin/config', { voice_chat_minutes_per_day: 0 })
    expect(bad.body.error).toMatchObject({ code: 'validation_error', field: 'voice_chat_minutes_per_day' })
    const set = await master.patch('/admin/config', { voice_chat_minutes_per_day: 1 })
    expect(set.status, set.text).toBe(200)
    expect(set.body.overrides.voice_chat_minutes_per_day).toBe(1)
    const chats: VoiceChatClient[] = []
    try {
      // 60 s a day; each chat reserves its ceiling (12 s): five chats hold the whole minute.
      for (let i = 0; i < 5; i++) chats.push(await live(tokens.b))
      for (const c of chats) expect(c.of('ready')).toHaveLength(1)
      const over = await connect(tokens.b)
      expect(refused(over) && over.status).toBe(429)
      if (refused(over)) {
        expect(over.body.error.code).toBe('quota_exceeded')
        expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
      }
      // Agent A has its own minutes.
      const other = await live(tokens.a)
      expect(other.of('ready')).toHaveLength(1)
      other.close()
      // One chat stops after a moment: the seconds it did not use come back, and a new chat opens.
      chats[0].stop()
      await completed(t.api, convOf(chats[0]))
      const next = await until(
        'a voice chat of agent B admitted again',
        async () => {
          const c = await connect(tokens.b)
          return refused(c) ? null : c
        },
        10_000,
      )
      next.close()
    } finally {
      for (const c of chats) c.close()
      await master.patch('/admin/config', { voice_chat_minutes_per_day: null })
    }
  }, 60_000)

  it('counts an IPv6 client by its /64 on the per-IP widget limit', async () => {
    verifies('abuse.widget.ipv6-per-ip')
    const config = (ip: string) =>
      fetch(`${server.base}/widget/config`, {
        headers: { 'x-svc-widget-token': tokens.a, origin: ORIGIN, 'x-forwarded-for': ip },
      })
    // 60 a minute per client: sixty addresses of one /64 spend one budget.
    for (let i = 1; i <= 60; i++) {
      const r = await config(`2001:db8:64:7:${i.toString(16)}::1`)
      expect(r.status, `request ${i}`).toBe(200)
    }
    const next = await config('2001:db8:64:7:ffff:1:2:3')
    expect(next.status).toBe(429)
    expect((await next.json()).error.code).toBe('rate_limited')
    // The neighbouring /64 is another client.
    expect((await config('2001:db8:64:8::1')).status).toBe(200)
  })
})
