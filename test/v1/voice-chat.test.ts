// Browser voice chat over /v1/widget/voice (issue 17) on the shared server, with a Node WebSocket playing
// the browser: the upgrade's refusals, a conversation spoken in tone text (the offline speech provider
// really transcribes it) and answered from the site's knowledge, barge-in, the pace bound, and the
// conversation the account then reads (conv_u, channel voice_chat, turns with audio offsets).
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { encodeToneText } from '~/lib/audio'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { refused, VOICE_RATE, VoiceChatClient } from '../helpers/voice-chat'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { openWidget } from '../helpers/widget'

const ORIGIN = 'https://shop.example.com'

describe('browser voice chat (shared server)', () => {
  const base = inject('base')
  const serviceOrigin = inject('origin')
  const master = createApi(base, inject('masterKey'))
  const wsUrl = (token: string | null) =>
    `${serviceOrigin.replace(/^http/, 'ws')}/v1/widget/voice${token === null ? '' : `?token=${encodeURIComponent(token)}`}`
  let t: Tenant
  let site: TestSite
  let agentId: string
  let token: string
  let ipCounter = 0
  const freshIp = () => `198.51.100.${(++ipCounter % 250) + 1}`

  const connect = (
    opts: { token?: string | null; origin?: string | null; headers?: Record<string, string>; echoMarks?: boolean } = {},
  ) => {
    const headers: Record<string, string> = { 'x-forwarded-for': freshIp(), ...(opts.headers ?? {}) }
    const origin = opts.origin === undefined ? ORIGIN : opts.origin
    if (origin) headers.origin = origin
    return VoiceChatClient.connect(wsUrl(opts.token === undefined ? token : opts.token), headers, {
      echoMarks: opts.echoMarks,
    })
  }
  /** A live voice chat; without echoed marks the agent's audio "plays" on the visitor's clock only. */
  const open = async (echoMarks = true) => {
    const c = await connect({ echoMarks })
    if (refused(c)) throw new Error(`refused: ${JSON.stringify(c)}`)
    await c.waitFor((x) => x.of('ready').length === 1, 15_000, 'ready')
    return c
  }
  const completed = (id: string) =>
    until(
      `conversation ${id} to complete`,
      async () => {
        const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
        return r.body.status === 'completed' ? r.body : null
      },
      30_000,
    )

  beforeAll(async () => {
    site = await serveBakery('Quokka Bakery', 'Fremantle')
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    token = await openWidget(t.api, agentId, { allowed_domains: ['shop.example.com'] })
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  it('refuses the upgrade without a valid token, from another Origin, with an API key, and as plain HTTP', async () => {
    verifies('widget.voice-refusals')
    for (const [opts, status, code] of [
      [{ token: null }, 401, 'invalid_widget_token'],
      [{ token: 'wpk_' + 'x'.repeat(32) }, 401, 'invalid_widget_token'],
      [{ origin: 'https://evil.example.net' }, 403, 'origin_not_allowed'],
      [{ origin: null }, 403, 'origin_not_allowed'],
      [{ headers: { authorization: `Bearer ${t.key}` } }, 401, 'invalid_widget_token'],
    ] as const) {
      const r = await connect(opts)
      expect(refused(r), JSON.stringify(opts)).toBe(true)
      if (!refused(r)) continue
      expect(r.status, JSON.stringify(opts)).toBe(status)
      expect(r.body.error.code).toBe(code)
      expect(r.body.error.request_id).toEqual(expect.any(String))
    }
    const plain = await fetch(`${base}/widget/voice?token=${token}`, { headers: { origin: ORIGIN } })
    expect(plain.status).toBe(426)
    // The voice socket is documented with the widget routes.
    const doc = await (await fetch(`${base}/openapi.json`)).json()
    expect(doc.paths['/widget/voice'].get.responses['101']).toBeDefined()
    // And the Widget and voice docs page explains embedding, the browser API and voice chat.
    const page = await fetch(`${base}/docs/pages/widget-and-voice.md`)
    expect(page.status).toBe(200)
    const text = await page.text()
    for (const words of [
      'embed_snippet',
      'X-Svc-Visitor-Token',
      '/widget/voice?token=',
      'voice_chat',
      'GET /widget/voice',
    ])
      expect(text).toContain(words)
  })

  it('greets, hears the visitor, answers from the knowledge in 16 kHz PCM16, and the account reads a voice_chat conversation', async () => {
    verifies('widget.voice-chat')
    const c = await open()
    const convId = String(c.of('ready')[0].conversation_id)
    expect(convId).toMatch(/^conv_u\d+$/)
    expect(c.of('ready')[0].sample_rate).toBe(VOICE_RATE)
    await c.waitFor((x) => x.captions('agent').length >= 1 && x.audioSamples > 0, 15_000, 'the greeting')
    // The greeting's mark is echoed (instant playback); the visitor then speaks, and keeps the line alive.
    await c.waitFor((x) => x.of('mark').length >= 1, 5_000, 'the greeting mark')
    const greetingSamples = c.audioSamples
    await c.stream(encodeToneText('How much does a sourdough loaf cost?', VOICE_RATE))
    const talking = c.silence(4_000)
    await c.waitFor((x) => x.captions('agent').length >= 2, 20_000, 'the answer')
    await talking
    expect(c.captions('visitor')).toEqual(['How much does a sourdough loaf cost?'])
    expect(c.captions('agent')[1]).toContain('$9')
    expect(c.audioSamples).toBeGreaterThan(greetingSamples)
    expect(c.of('clear')).toHaveLength(0)
    c.stop()
    await c.waitFor((x) => x.closed, 10_000, 'the close')
    expect(c.of('end')).toEqual([{ type: 'end', reason: 'caller_hung_up' }])
    expect(c.closeCode).toBe(1000)

    const conv = await completed(convId)
    expect(conv.channel_detail.channel).toBe('voice_chat')
    expect(conv.agent_id).toBe(agentId)
    const turns = conv.transcript.turns ?? conv.transcript
    const spoken = (turns as any[]).map((x) => [x.speaker, x.turn_type])
    expect(spoken.slice(0, 3)).toEqual([
      ['agent', 'greeting'],
      ['visitor', 'message'],
      ['agent', 'answer'],
    ])
    const visitor = (turns as any[])[1]
    expect(visitor.text).toBe('How much does a sourdough loaf cost?')
    expect(visitor.audio_offset_ms).toEqual(expect.any(Number))
    expect((turns as any[])[2].audio_offset_ms).toBeGreaterThan(visitor.audio_offset_ms)
    const listed = await t.api.get(`/conversations?channel=voice_chat&agent_id=${agentId}`)
    expect(listed.body.data.map((x: any) => x.conversation_id)).toContain(convId)
  })

  it('stops talking when the visitor barges in (barge_in true), and not when it is off', async () => {
    verifies('widget.voice-barge-in')
    // Marks are not echoed: the greeting "plays" on the visitor's clock, so speech over it interrupts it.
    const c = await open(false)
    await c.waitFor((x) => x.captions('agent').length >= 1, 15_000, 'the greeting')
    await c.stream(encodeToneText('Hello there, can you hear me?', VOICE_RATE))
    await c.waitFor((x) => x.of('clear').length >= 1, 10_000, 'the clear of barge-in')
    c.close()

    expect((await t.api.patch(`/agents/${agentId}`, { barge_in: false })).status).toBe(200)
    try {
      const quiet = await open(false)
      await quiet.waitFor((x) => x.captions('agent').length >= 1, 15_000, 'the greeting')
      await quiet.stream(encodeToneText('Hello there, can you hear me?', VOICE_RATE))
      await quiet.silence(500)
      expect(quiet.of('clear')).toHaveLength(0)
      quiet.close()
    } finally {
      await t.api.patch(`/agents/${agentId}`, { barge_in: true })
    }
  })

  it('counts upgrades against the per-IP widget limit: 429 rate_limited with Retry-After past it', async () => {
    verifies('widget.voice-refusals', 'widget.limits')
    const ip = '192.0.2.77'
    let last: Awaited<ReturnType<typeof connect>> | null = null
    for (let i = 0; i < 61; i++) {
      // Refused after the IP limit (another Origin), so no conversation is opened by the loop.
      last = await connect({ origin: 'https://evil.example.net', headers: { 'x-forwarded-for': ip } })
      if (refused(last) && last.status === 429) break
      expect(refused(last) && last.status).toBe(403)
    }
    expect(last && refused(last) && last.status).toBe(429)
    if (last && refused(last)) {
      expect(last.body.error.code).toBe('rate_limited')
      expect(Number(last.headers['retry-after'])).toBeGreaterThan(0)
    }
  })

  it('closes the conversation of a socket that left while it was being opened', async () => {
    verifies('widget.voice-chat')
    // Closed right after the upgrade, before ready: whichever side wins the race, nothing stays in progress.
    for (let i = 0; i < 5; i++) {
      const ws = new WebSocket(wsUrl(token), { headers: { origin: ORIGIN, 'x-forwarded-for': freshIp() } })
      // Dropped the moment the upgrade is answered, while the server opens the conversation.
      await new Promise<void>((resolve, reject) => {
        ws.on('upgrade', () => {
          ws.terminate()
          resolve()
        })
        ws.on('error', () => resolve())
        ws.on('unexpected-response', () => reject(new Error('refused')))
      })
    }
    await until(
      'no voice chat of the agent in progress',
      async () => {
        const r = await t.api.get(`/conversations?channel=voice_chat&status=in_progress&agent_id=${agentId}`)
        return r.status === 200 && r.body.data.length === 0
      },
      15_000,
    )
  })

  it('closes a socket that sends audio faster than real time, and the conversation still ends', async () => {
    verifies('widget.voice-refusals')
    const c = await open()
    const convId = String(c.of('ready')[0].conversation_id)
    // 20 s of audio at once: far past 1.5× real time plus the slack.
    const burst = new Int16Array(VOICE_RATE * 20)
    for (let at = 0; at < burst.length && !c.closed; at += 16_000) c.ws.send(Buffer.from(burst.buffer, at * 2, 32_000))
    await c.waitFor((x) => x.closed, 10_000, 'the close')
    expect(c.closeCode).toBe(1008)
    const conv = await completed(convId)
    expect(conv.status).toBe('completed')
  })
})
