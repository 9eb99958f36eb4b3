// A call whose speech-to-text is Deepgram's live WebSocket (SVC_STT=deepgram, the other direction and the
// caller left on SVC_SPEECH=simulated), on a server of its own against the local Deepgram fake
// (test/helpers/fake-deepgram.ts). The simulated network's caller speaks tone text; every caller frame is
// streamed to the live socket, whose interim, final (speech_final) and utterance-end events end the turns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startFakeDeepgram, type FakeDeepgram } from '../helpers/fake-deepgram'
import { startServer, type TestServer } from '../helpers/server'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const TO = `+1415558${String(1000 + (process.pid % 8000)).padStart(4, '0')}`

let deepgram: FakeDeepgram
let server: TestServer
let site: TestSite
let t: Tenant
let agentId: string

beforeAll(async () => {
  deepgram = await startFakeDeepgram()
  server = await startServer({
    env: {
      SVC_STT: 'deepgram',
      DEEPGRAM_BASE_URL: deepgram.url,
      DEEPGRAM_API_KEY: deepgram.key,
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000',
    },
  })
  site = await serveBakery('Wombat Bakery', 'Hobart')
  t = await createTenant(createApi(server.base, server.masterKey))
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  expect((await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId })).status).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await deepgram?.close()
  await site?.close()
})

describe('SVC_STT=deepgram (own server, fake Deepgram)', () => {
  it('transcribes a call live: every caller frame is streamed, and its events end the turns', async () => {
    verifies('voice.deepgram', 'voice.latency-breakdown')
    const started = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550188',
      utterances: ['How much does a sourdough loaf cost?', 'When do you open?'],
    })
    expect(started.status, started.text).toBe(202)
    const id = started.body.conversation_id
    const conv = await until(
      `conversation ${id} to complete`,
      async () => {
        const r = await t.api.get(`/conversations/${id}?include=transcript,metrics`)
        return r.body.status === 'completed' ? r.body : null
      },
      60_000,
    )
    expect(conv.transcript.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.text)).toEqual([
      'How much does a sourdough loaf cost?',
      'When do you open?',
    ])
    const answers = conv.transcript.filter((x: any) => x.turn_type === 'answer')
    expect(answers).toHaveLength(2)
    expect(answers[0].text).toContain('$9')
    for (const a of answers) expect(a.latency_breakdown.stt_ms).toEqual(expect.any(Number))

    // One live socket for the call, asked for interim results, endpointing on the agent's end of speech and
    // utterance-end events, fed the caller's audio; the speech provider was never asked to transcribe whole.
    expect(deepgram.sockets).toHaveLength(1)
    const socket = deepgram.sockets[0]
    expect(socket.query).toMatchObject({
      encoding: 'linear16',
      sample_rate: '8000',
      interim_results: 'true',
      endpointing: '500',
      utterance_end_ms: '1000',
    })
    expect(socket.authorization).toBe(`Token ${deepgram.key}`)
    expect(socket.audioBytes).toBeGreaterThan(8000 * 2 * 4)
    const sent = socket.sent.map((m) => m.type)
    expect(sent).toContain('Results')
    expect(socket.sent.some((m) => m.type === 'Results' && m.is_final === false)).toBe(true)
    expect(socket.sent.some((m) => m.type === 'Results' && m.speech_final === true)).toBe(true)
    expect(deepgram.requests.filter((r) => r.path.startsWith('/v1/listen') && !r.upgrade)).toEqual([])
    // The call's end closes the socket politely.
    await until('the live socket to close', async () => socket.closed, 10_000)
    expect(socket.controls).toContain('CloseStream')
  })
})
