// Voice chat in real headless Chromium (issue 17): Chromium's fake microphone plays a WAV of the visitor's
// question (tone text, which the local fake speech server really decodes), the widget streams it as
// 16 kHz PCM16 over /v1/widget/voice, the server transcribes and answers through the fake OpenAI-compatible
// speech server, and the widget shows both captions and plays the answer. The account then reads a
// completed voice_chat conversation with the transcribed turns.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeToneText, encodeWav } from '~/lib/audio'
import { createApi } from '../helpers/api'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, screenshot, skipBrowserTests } from '../helpers/browser'
import { buildAgent } from '../helpers/build'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveBakery, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const QUESTION = 'How much does a sourdough loaf cost?'
const HOST = 'shop.example.com'

/** Waits for the widget's microphone button to show `pressed` (voice chat on or off). */
const micPressed = (page: Page, pressed: boolean, timeout: number) =>
  page.waitForFunction(
    (want) =>
      document.querySelector('[data-svc-widget]')?.shadowRoot?.querySelector('.mic')?.getAttribute('aria-pressed') ===
      want,
    String(pressed),
    { timeout },
  )

describe('voice chat in Chromium', () => {
  const browserOk = !skipBrowserTests('voice chat in Chromium')
  let browser: Browser | null = null
  let server: TestServer
  let speech: FakeSpeech
  let site: TestSite
  let host: TestSite
  let t: Tenant
  let agentId: string

  beforeAll(async () => {
    if (!browserOk) return
    speech = await startFakeSpeech()
    server = await startServer({
      env: { SVC_SPEECH: 'openai', SPEECH_BASE_URL: speech.url, SPEECH_API_KEY: 'sk-fake-speech' },
    })
    site = await serveBakery('Numbat Bakery', 'Perth')
    const master = createApi(server.base, server.masterKey)
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const w = await t.api.patch(`/agents/${agentId}/widget`, { allowed_domains: [HOST] })
    expect(w.status).toBe(200)
    // The host page, with the snippet exactly as GET widget hands it out.
    const snippet = (await t.api.get(`/agents/${agentId}/widget`)).body.embed_snippet as string
    host = await serveSite({ '/': { body: html('A shop', `<main><h1>A shop</h1><p>Welcome.</p></main>${snippet}`) } })
  }, 180_000)
  afterAll(async () => {
    await host?.close()
    await site?.close()
    await server?.stop()
    await speech?.close()
    await browser?.close()
  })

  it.skipIf(!browserOk)(
    'the fake microphone asks, the agent answers aloud from the knowledge, a voice_chat conversation is recorded',
    async () => {
      verifies('widget.browser-voice')
      // The visitor's question, then silence: Chromium loops the file, so the question comes back every ~9 s.
      const dir = mkdtempSync(join(tmpdir(), 'svc-voice-'))
      const rate = 48_000
      const question = encodeToneText(QUESTION, rate)
      const wav = new Int16Array(question.length + rate * 6)
      wav.set(question, rate)
      const wavPath = join(dir, 'question.wav')
      writeFileSync(wavPath, encodeWav(wav, rate))

      const port = new URL(host.origin).port
      const pageOrigin = `http://${HOST}:${port}`
      browser = await launchBrowser([
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${wavPath}`,
        // getUserMedia needs a secure context; the test page is plain http on a mapped host name.
        `--unsafely-treat-insecure-origin-as-secure=${pageOrigin}`,
        '--autoplay-policy=no-user-gesture-required',
      ])
      const context = await browser.newContext()
      try {
        const page = await context.newPage()
        const errors: string[] = []
        page.on('pageerror', (e) => errors.push(e.message))
        await page.goto(`${pageOrigin}/`)
        await page.locator('[data-svc-widget] .launcher').click()
        await page.locator('[data-svc-widget] .mic').click()
        await micPressed(page, true, 15_000)
        const userLine = page.locator('[data-svc-widget] .msg.user', { hasText: QUESTION })
        await userLine.first().waitFor({ timeout: 30_000 })
        const answer = page.locator('[data-svc-widget] .msg.agent', { hasText: '$9' })
        await answer.first().waitFor({ timeout: 30_000 })
        await screenshot(page, 'voice-chat')
        // The caption shows the whole answer at once; the transcript keeps what was heard, so the visitor
        // listens to it (the browser echoes the answer's mark once played) before hanging up.
        await until(
          'the answer to have played',
          async () => {
            const list = await t.api.get(`/conversations?channel=voice_chat&agent_id=${agentId}`)
            const id = list.body.data?.[0]?.conversation_id
            if (!id) return null
            const r = await t.api.get(`/conversations/${id}?include=transcript`)
            const turns = (r.body.transcript ?? []) as { turn_type: string; text: string }[]
            return turns.some((x) => x.turn_type === 'answer' && x.text.includes('$9')) || null
          },
          30_000,
        )
        await page.locator('[data-svc-widget] .mic').click()
        await micPressed(page, false, 10_000)
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }

      const conv = await until(
        'the voice_chat conversation to complete',
        async () => {
          const list = await t.api.get(`/conversations?channel=voice_chat&agent_id=${agentId}`)
          const id = list.body.data?.[0]?.conversation_id
          if (!id) return null
          const r = await t.api.get(`/conversations/${id}?include=transcript`)
          return r.body.status === 'completed' ? r.body : null
        },
        30_000,
      )
      expect(conv.conversation_id).toMatch(/^conv_u\d+$/)
      const turns = (conv.transcript.turns ?? conv.transcript) as any[]
      const visitor = turns.filter((x) => x.speaker === 'visitor')
      expect(visitor.length).toBeGreaterThanOrEqual(1)
      expect(visitor[0].text).toBe(QUESTION)
      expect(turns.some((x) => x.speaker === 'agent' && x.turn_type === 'answer' && x.text.includes('$9'))).toBe(true)
      // The speech really went through the fake OpenAI-compatible server, both ways.
      expect(speech.requests.some((r) => r.path === '/v1/audio/transcriptions')).toBe(true)
      expect(speech.requests.some((r) => r.path === '/v1/audio/speech')).toBe(true)
    },
  )
  it.skipIf(!browserOk)('without microphone permission the widget says so and stays a text chat', async () => {
    verifies('widget.browser-voice')
    const pageOrigin = `http://${HOST}:${new URL(host.origin).port}`
    const denied = await launchBrowser([
      '--use-fake-device-for-media-stream',
      '--deny-permission-prompts',
      `--unsafely-treat-insecure-origin-as-secure=${pageOrigin}`,
    ])
    try {
      const voiceChats = async () =>
        (await t.api.get(`/conversations?channel=voice_chat&agent_id=${agentId}`)).body.data.length as number
      const before = await voiceChats()
      const page = await (await denied.newContext()).newPage()
      await page.goto(`${pageOrigin}/`)
      await page.locator('[data-svc-widget] .launcher').click()
      await page.locator('[data-svc-widget] .mic').click()
      await page.locator('[data-svc-widget] .msg.error', { hasText: 'microphone' }).waitFor({ timeout: 15_000 })
      expect(await page.locator('[data-svc-widget] .mic').getAttribute('aria-pressed')).toBe('false')
      // The text chat goes on as before.
      await page.locator('[data-svc-widget] textarea').fill(QUESTION)
      await page.keyboard.press('Enter')
      await page.locator('[data-svc-widget] .msg.agent', { hasText: '$9' }).first().waitFor({ timeout: 30_000 })
      await screenshot(page, 'voice-chat-denied')
      const widget = await t.api.get(`/conversations?channel=widget&agent_id=${agentId}`)
      expect(widget.body.data.length).toBeGreaterThanOrEqual(1)
      // The refused microphone opened no voice conversation.
      expect(await voiceChats()).toBe(before)
    } finally {
      await denied.close()
    }
  })
})
