// The streaming voice loop (issue 28) end to end on a server of its own: Twilio Media Streams from a fake
// Twilio caller, the openai chat engine against a scripted streaming chat server (test/helpers/fake-chat.ts)
// and the openai speech provider against a tone-text speech server that streams raw PCM. The caller's audio
// is the call's clock, so most checks send it faster than real time and stay exact; the end-of-speech check
// paces it in real time. Shows: the first sentence plays while the engine still writes; barge-in in the
// middle of the second sentence keeps only what was played; a pause shorter than end_of_speech_ms is one
// turn; a tool call inside a streamed answer; the engine failing mid-stream (the fallback is heard, the turn
// stored once); latency_breakdown on phone and voice-chat answers, null elsewhere; end_of_speech_ms acts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeToneText } from '~/lib/audio'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startFakeChat, type FakeChat } from '../helpers/fake-chat'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'
import { inboundCall, startFakeTwilio, TwilioMediaClient, type FakeTwilio } from '../helpers/fake-twilio'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { refused, VOICE_RATE, VoiceChatClient } from '../helpers/voice-chat'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { openWidget } from '../helpers/widget'

const RATE = 8000
const TO = `+1415557${String(1000 + (process.pid % 8000)).padStart(4, '0')}`
const CALLER = '+14155550143'
const ORIGIN = 'https://shop.example.com'

// The scripted answers, by what the caller asks.
const S1 = 'Our rye sourdough is baked every morning.'
const S2 = 'The spelt loaf comes out of the oven at noon and sells out within an hour on most days of the week.'
const S3 = 'We also bake a seeded loaf on Fridays.'
const FALLBACK = 'Sorry, something went wrong on my side; someone will call you back.'
const TOOL_ANSWER = 'We will call you back tomorrow morning.'

let fake: FakeTwilio
let speech: FakeSpeech
let chat: FakeChat
let server: TestServer
let site: TestSite
let t: Tenant
let agentId: string

beforeAll(async () => {
  fake = await startFakeTwilio()
  speech = await startFakeSpeech()
  chat = await startFakeChat()
  chat.script = (req) => {
    const user = req.user.toLowerCase()
    if (req.messages.some((m) => m.content.startsWith('Result of tool'))) return { text: TOOL_ANSWER }
    if (user.includes('loaves')) return { text: `${S1} ${S2} ${S3}`, firstTokenMs: 50, tokenMs: 40 }
    if (user.includes('call me back'))
      return { tools: [{ name: 'capture_lead', arguments: { phone: '+14155550143', name: 'Ada' } }] }
    if (user.includes('break')) return { text: `${S1} ${S2}`, tokenMs: 5, failAfterWords: 7 }
    if (user.includes('swallow')) return { text: '[UNANSWERED] I am afraid I have no idea about swallows.' }
    if (user.includes('thank')) return { text: '[UNANSWERED] You are welcome.' }
    return { text: 'Happy to help.' }
  }
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  server = await startServer({
    env: {
      PORT: String(port),
      SVC_PUBLIC_URL: origin,
      SVC_TELEPHONY: 'twilio',
      TWILIO_API_BASE_URL: fake.url,
      TWILIO_ACCOUNT_SID: fake.accountSid,
      TWILIO_AUTH_TOKEN: fake.authToken,
      SVC_CHAT_ENGINE: 'openai',
      OPENAI_BASE_URL: chat.url,
      OPENAI_API_KEY: 'sk-fake-chat',
      OPENAI_MODEL: 'fake-small',
      OPENAI_LARGE_MODEL: 'fake-large',
      SVC_SPEECH: 'openai',
      SPEECH_BASE_URL: speech.url,
      SPEECH_API_KEY: 'sk-fake-speech',
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000,chat=100000',
    },
  })
  site = await serveSite({
    '/': { body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>Quokka Bakery bakes bread every day.</p>') },
  })
  t = await createTenant(createApi(server.base, server.masterKey))
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  const patched = await t.api.patch(`/agents/${agentId}`, {
    barge_in: true,
    fallback_message: FALLBACK,
    capabilities: ['capture_lead'],
    capability_settings: { lead_emails: ['leads@example.com'] },
  })
  expect(patched.status, patched.text).toBe(200)
  // Only a number the Twilio account owns is routed (decisions "Numbers").
  fake.own(TO)
  const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId })
  expect(num.status, num.text).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
  await speech?.close()
  await chat?.close()
  await site?.close()
})

/** Agent audio on the 8 kHz leg for a text the fake speaks (24 kHz tone text, resampled to 8 kHz). */
const legSamples = (text: string) => Math.round(encodeToneText(text, 24_000).length / 3)
const sentSamples = (c: TwilioMediaClient) =>
  c.outgoing.reduce((n, o) => n + (o.event === 'media' ? o.pcm.length : 0), 0)
const marks = (c: TwilioMediaClient) => c.outgoing.filter((o) => o.event === 'mark').length

/**
 * Rings the number and opens the stream. Playback at the fake Twilio is so slow that it never echoes a
 * mark by itself: what the agent's audio has "played" is then exactly the caller audio sent since.
 */
async function call() {
  const rang = await inboundCall(server.origin, { from: CALLER, to: TO, authToken: fake.authToken })
  expect(rang.status, rang.body).toBe(200)
  const client = await TwilioMediaClient.connect(rang.twiml.streamUrl!, {
    callSid: rang.callSid,
    parameters: rang.twiml.parameters,
    playbackRate: 0.0001,
  })
  // The greeting, sent in full, then listened to (the caller's clock plays it).
  await client.waitFor((c) => marks(c) >= 1, 15_000, 'the greeting')
  await client.silence(Math.ceil((sentSamples(client) * 1000) / RATE) + 100)
  return { client, conversationId: rang.twiml.parameters.conversation_id }
}

/** The caller says `text` (tone text), then `pauseMs` of silence. */
const speak = (client: TwilioMediaClient, text: string, pauseMs = 1_000) => say(client, text, pauseMs)
async function say(client: TwilioMediaClient, text: string, pauseMs = 520) {
  await client.say(encodeToneText(text, RATE))
  await client.silence(pauseMs)
}

/** Waits for the next complete answer (its mark), then lets it play in full on the caller's clock. */
async function hearAnswer(client: TwilioMediaClient, n: number) {
  const before = sentSamples(client)
  await client.waitFor((c) => marks(c) >= n, 20_000, `answer ${n}`)
  await client.silence(Math.ceil(((sentSamples(client) - before) * 1000) / RATE) + 100)
}

const transcript = (id: string) =>
  until(
    `conversation ${id} to complete`,
    async () => {
      const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
      return r.body.status === 'completed' ? r.body : null
    },
    30_000,
  )

describe('the streaming voice loop (own server: fake Twilio, streaming chat and speech)', () => {
  it('speaks the first sentence while the engine still writes; barge-in in the second sentence keeps only what was played', async () => {
    verifies('voice.streaming', 'voice.barge-in-heard')
    const { client, conversationId } = await call()
    const asked = chat.requests.length
    const greeting = sentSamples(client)
    await say(client, 'Tell me about the loaves')
    let firstAudioAt = 0
    await client.waitFor(
      (c) => {
        if (sentSamples(c) > greeting && !firstAudioAt) firstAudioAt = Date.now()
        return firstAudioAt > 0
      },
      20_000,
      'the first audio of the answer',
    )
    // The whole answer has been sent (its one mark) and not played yet.
    await client.waitFor((c) => marks(c) >= 2, 20_000, 'the whole answer')
    const streamed = chat.requests.slice(asked).find((r) => r.user === 'Tell me about the loaves')!
    expect(streamed.stream).toBe(true)
    expect(streamed.finishedAt).toBeGreaterThan(0)
    // The first frame went out before the engine had written its last word (28 words, 40 ms apart).
    expect(firstAudioAt).toBeLessThan(streamed.finishedAt!)
    expect(sentSamples(client) - greeting).toBeGreaterThanOrEqual(legSamples(S1) + legSamples(S2) + legSamples(S3) - 30)
    // The caller hears the first sentence and half of the second, then talks over the agent.
    await client.silence(((legSamples(S1) + legSamples(S2) / 2) * 1000) / RATE)
    await say(client, 'Sorry, one more thing', 1_000)
    await client.waitFor((c) => c.clears >= 1, 10_000, 'the clear of barge-in')
    await hearAnswer(client, 3)
    client.hangUp()
    const conv = await transcript(conversationId)
    const answers = conv.transcript.filter((x: any) => x.turn_type === 'answer')
    expect(answers).toHaveLength(2)
    const heard: string = answers[0].text
    expect(heard.startsWith(`${S1} `)).toBe(true)
    const partial = heard.slice(S1.length + 1)
    expect(partial.length).toBeGreaterThan(0)
    expect(S2.startsWith(partial)).toBe(true)
    expect(partial.length).toBeLessThan(S2.length)
    expect(heard).not.toContain('seeded')
    // Its audio is what played: the first sentence and part of the second, not the whole answer.
    expect(answers[0].audio_duration_ms).toBeGreaterThan(((legSamples(S1) + legSamples(S2) / 2) * 1000) / RATE - 50)
    expect(answers[0].audio_duration_ms).toBeLessThan(((legSamples(S1) + legSamples(S2)) * 1000) / RATE)
    expect(conv.transcript.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.text)).toEqual([
      'Tell me about the loaves',
      'Sorry, one more thing',
    ])
    expect(answers[1].text).toBe('Happy to help.')
  })

  it('a caller who pauses 300 ms and goes on (end_of_speech_ms 500) is answered once, after the whole sentence', async () => {
    verifies('voice.pause-one-turn')
    const { client, conversationId } = await call()
    const asked = chat.requests.length
    await say(client, 'Could I order', 300)
    await say(client, 'two rye loaves', 1_000)
    await hearAnswer(client, 2)
    client.hangUp()
    const conv = await transcript(conversationId)
    expect(conv.transcript.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.text)).toEqual([
      'Could I order two rye loaves',
    ])
    expect(conv.transcript.filter((x: any) => x.turn_type === 'answer')).toHaveLength(1)
    // The engine was asked once (summary jobs of earlier calls ask it too, without streaming).
    expect(
      chat.requests
        .slice(asked)
        .filter((r) => r.stream)
        .map((r) => r.user),
    ).toEqual(['Could I order two rye loaves'])
  })

  it('runs a tool called inside a streamed answer, then speaks the answer built from its result', async () => {
    verifies('voice.tool-in-stream')
    const { client, conversationId } = await call()
    await say(client, 'Please call me back', 1_000)
    await hearAnswer(client, 2)
    client.hangUp()
    const conv = await transcript(conversationId)
    const [tool] = conv.transcript.filter((x: any) => x.turn_type === 'tool')
    expect(tool).toMatchObject({
      detected_intent: 'capture_lead',
      tool: { name: 'capture_lead', result: { ok: true, record: { type: 'lead', phone: '+14155550143' } } },
    })
    const answers = conv.transcript.filter((x: any) => x.turn_type === 'answer')
    expect(answers.map((a: any) => a.text)).toEqual([TOOL_ANSWER])
    expect(tool.turn_index).toBeLessThan(answers[0].turn_index)
  })

  it('an engine failing mid-stream: the caller hears what was said and the fallback, stored once as unanswered', async () => {
    verifies('voice.engine-fails')
    const { client, conversationId } = await call()
    await say(client, 'Now break please', 1_000)
    await hearAnswer(client, 2)
    client.hangUp()
    const conv = await transcript(conversationId)
    const answers = conv.transcript.filter((x: any) => x.turn_type === 'answer')
    expect(answers).toHaveLength(1)
    expect(answers[0]).toMatchObject({ text: `${S1} ${FALLBACK}`, unanswered: true })
    expect(conv.transcript.filter((x: any) => x.speaker === 'visitor')).toHaveLength(1)
  })

  it('answers carry latency_breakdown on phone and voice-chat turns, null on other turns', async () => {
    verifies('voice.latency-breakdown')
    const { client, conversationId } = await call()
    await say(client, 'What time do you open?', 1_000)
    await hearAnswer(client, 2)
    client.hangUp()
    const phone = await transcript(conversationId)
    const keys = ['endpoint_ms', 'llm_first_token_ms', 'stt_ms', 'tts_first_byte_ms']
    for (const turn of phone.transcript) {
      if (turn.turn_type !== 'answer') {
        expect(turn.latency_breakdown, turn.turn_type).toBeNull()
        continue
      }
      expect(Object.keys(turn.latency_breakdown).sort()).toEqual(keys)
      for (const k of keys) expect(turn.latency_breakdown[k], k).toEqual(expect.any(Number))
      expect(turn.latency_ms).toEqual(expect.any(Number))
    }

    // Browser voice chat on the same loop.
    const widgetToken = await openWidget(t.api, agentId, { allowed_domains: ['shop.example.com'] })
    const wsUrl = `${server.origin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(widgetToken)}`
    const c = await VoiceChatClient.connect(wsUrl, { origin: ORIGIN, 'x-forwarded-for': '198.51.100.77' })
    if (refused(c)) throw new Error(`refused: ${JSON.stringify(c)}`)
    await c.waitFor((x) => x.of('mark').length >= 1, 15_000, 'the greeting')
    const convId = String(c.of('ready')[0].conversation_id)
    await c.stream(encodeToneText('What time do you open?', VOICE_RATE))
    const talking = c.silence(2_000)
    await c.waitFor((x) => x.captions('agent').length >= 2, 20_000, 'the answer')
    await talking
    c.stop()
    const chatConv = await transcript(convId)
    const answer = chatConv.transcript.find((x: any) => x.turn_type === 'answer')
    expect(Object.keys(answer.latency_breakdown).sort()).toEqual(keys)
    expect(chatConv.transcript.find((x: any) => x.turn_type === 'greeting').latency_breakdown).toBeNull()

    // An API chat answer has a latency but no voice breakdown.
    const api = await t.api.post('/conversations', { agent_id: agentId })
    const turn = await t.api.post(`/conversations/${api.body.conversation_id}/messages`, { text: 'Hello there' })
    expect(turn.status, turn.text).toBe(200)
    expect(turn.body.turn.latency_breakdown).toBeNull()
  })

  it('end_of_speech_ms acts: the turn ends that long after the caller stops (caller paced in real time)', async () => {
    verifies('voice.end-of-speech')
    const endpointAfter = async (ms: number) => {
      const set = await t.api.patch(`/agents/${agentId}/voice`, { end_of_speech_ms: ms })
      expect(set.status, set.text).toBe(200)
      const { client, conversationId } = await call()
      await client.say(encodeToneText('When do you open?', RATE), { realtime: true })
      await client.silence(ms + 400, { realtime: true })
      // Part of the answer may already have played during that silence: the caller listens to all of it.
      await client.waitFor((c) => marks(c) >= 2, 20_000, 'the answer')
      await client.silence(5_000)
      client.hangUp()
      const conv = await transcript(conversationId)
      const answer = conv.transcript.find((x: any) => x.turn_type === 'answer')
      expect(answer, JSON.stringify(conv.transcript)).toBeDefined()
      return answer.latency_breakdown.endpoint_ms as number
    }
    const long = await endpointAfter(900)
    const short = await endpointAfter(250)
    expect(long).toBeGreaterThanOrEqual(880)
    expect(short).toBeGreaterThanOrEqual(230)
    // A loaded machine paces the caller's frames slower than real time, which stretches both alike.
    expect(short).toBeLessThan(long - 300)
    await t.api.patch(`/agents/${agentId}/voice`, { end_of_speech_ms: null })
  })

  it('the settings act with the openai engine too: fallback, small talk and a person asked for, on API chat and a call', async () => {
    verifies('behaviour.fallback', 'behaviour.small-talk', 'behaviour.escalation')
    // API chat: the marked answer says fallback_message; thanks is never unanswered; a person is a handoff
    // decided by the host, without asking the engine.
    const c = await t.api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id
    const say = (text: string) => t.api.post(`/conversations/${id}/messages`, { text })
    const asked = chat.requests.length
    expect((await say('What is the airspeed of a swallow?')).body.turn).toMatchObject({
      text: FALLBACK,
      unanswered: true,
    })
    expect((await say('Thank you')).body.turn).toMatchObject({ unanswered: false })
    expect((await say('I want to talk to a human please')).body.turn).toMatchObject({ turn_type: 'handoff' })
    expect(chat.requests.slice(asked).filter((r) => r.user.includes('human'))).toEqual([])

    // A call: the marked answer is replaced by fallback_message before anything of it is spoken.
    const { client, conversationId } = await call()
    await speak(client, 'Tell me about swallows')
    await hearAnswer(client, 2)
    client.hangUp()
    const conv = await transcript(conversationId)
    const answers = conv.transcript.filter((x: any) => x.turn_type === 'answer')
    expect(answers).toHaveLength(1)
    expect(answers[0]).toMatchObject({ text: FALLBACK, unanswered: true })
  })

  it('the profile settings reach the engine: business_profile, conversation_style, languages; voice_style on calls', async () => {
    verifies('behaviour.profile')
    const set = await t.api.patch(`/agents/${agentId}`, {
      business_profile: 'A family sourdough bakery in Hobart.',
      conversation_style: 'warm and brief',
      voice_style: 'calm and slow',
      languages: ['en', 'fr'],
    })
    expect(set.status, set.text).toBe(200)
    // The system prompt of the last answer's request (a knowledge summary may be written in between).
    const system = () => chat.requests.filter((r) => r.user === 'When do you open?').at(-1)!.messages[0].content
    const c = await t.api.post('/conversations', { agent_id: agentId })
    await t.api.post(`/conversations/${c.body.conversation_id}/messages`, { text: 'When do you open?' })
    expect(system()).toContain('About the business: A family sourdough bakery in Hobart.')
    expect(system()).toContain('Conversation style: warm and brief.')
    expect(system()).toContain("Answer in the visitor's language when it is one of en, fr")
    expect(system()).not.toContain('Speaking style')
    const { client } = await call()
    await speak(client, 'When do you open?')
    await hearAnswer(client, 2)
    client.hangUp()
    expect(system()).toContain('Speaking style: calm and slow.')
  })

  it('the model and voice settings reach the providers: temperature, max_response_tokens, use_large_model; voice_id, speaking_rate, voice_locale', async () => {
    verifies('behaviour.model-voice')
    // The last answer's request (summaries of earlier calls may be written in between).
    const last = () => chat.requests.filter((r) => r.user === 'When do you open?').at(-1)!.settings
    const ask = async () => {
      const c = await t.api.post('/conversations', { agent_id: agentId })
      const m = await t.api.post(`/conversations/${c.body.conversation_id}/messages`, { text: 'When do you open?' })
      expect(m.status, m.text).toBe(200)
      return m.body
    }
    await ask()
    expect(last()).toMatchObject({ model: 'fake-small', temperature: 0.7 })
    expect(last().max_tokens).toBeUndefined()
    const set = await t.api.patch(`/agents/${agentId}`, {
      temperature: 0.2,
      max_response_tokens: 120,
      use_large_model: true,
      voice_id: 'nova',
      speaking_rate: 1.25,
      voice_locale: 'fr-FR',
    })
    expect(set.status, set.text).toBe(200)
    try {
      await ask()
      expect(last()).toEqual({ model: 'fake-large', temperature: 0.2, max_tokens: 120 })
      const before = speech.requests.length
      const { client } = await call()
      await speak(client, 'When do you open?')
      await hearAnswer(client, 2)
      client.hangUp()
      const sent = speech.requests.slice(before)
      const spoken = sent.filter((r) => r.path === '/v1/audio/speech')
      const heard = sent.filter((r) => r.path === '/v1/audio/transcriptions')
      expect(spoken.length).toBeGreaterThan(0)
      expect(heard.length).toBeGreaterThan(0)
      for (const r of spoken) expect(r.fields).toMatchObject({ voice: 'nova', speed: 1.25 })
      for (const r of heard) expect(r.fields.language).toBe('fr')
      expect(last()).toMatchObject({ model: 'fake-large', temperature: 0.2, max_tokens: 120 })
    } finally {
      await t.api.patch(`/agents/${agentId}`, {
        temperature: 0.7,
        max_response_tokens: null,
        use_large_model: false,
        voice_id: null,
        speaking_rate: 1,
        voice_locale: null,
      })
    }
  })
})
