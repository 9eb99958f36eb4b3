// The openai engine against a local fake server speaking the /chat/completions protocol: no network.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import openai from '../../providers/chat/openai'
import { verifies } from '../requirements'

interface Seen {
  path: string
  auth: string | undefined
  body: any
}
let server: Server
let seen: Seen[] = []
// Each request takes the next scripted answer: [status, body].
let script: [number, unknown][] = []

const readBody = (req: IncomingMessage) =>
  new Promise<string>((ok) => {
    let s = ''
    req.on('data', (c) => (s += c))
    req.on('end', () => ok(s))
  })
const completion = (message: object, model = 'fake-mini') => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model,
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
})
const saved = { ...process.env }

beforeAll(async () => {
  server = createServer(async (req, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(await readBody(req)) })
    const [status, body] = script.shift() ?? [500, { error: { message: 'no scripted answer' } }]
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  // Set after import on purpose: the engine must read its settings at call time.
  process.env.OPENAI_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`
  process.env.OPENAI_API_KEY = 'sk-test-123'
  process.env.OPENAI_MODEL = 'fake-mini'
  process.env.OPENAI_LARGE_MODEL = 'fake-large'
})
afterAll(async () => {
  process.env = saved
  await new Promise((ok) => server.close(ok))
})
beforeEach(() => {
  seen = []
  script = []
})

describe('openai engine', () => {
  it('posts the protocol with the bearer key and maps a text answer', async () => {
    verifies('engine.openai')
    script = [[200, completion({ content: 'We open at 9am.' })]]
    const r = await openai.complete({
      system: 'You are Acme.',
      messages: [{ role: 'user', content: 'When do you open?' }],
      temperature: 0.3,
      maxTokens: 100,
    })
    expect(r).toEqual({
      text: 'We open at 9am.',
      toolCalls: [],
      unanswered: false,
      usage: { input: 42, output: 7 },
      model: 'fake-mini',
    })
    expect(seen).toHaveLength(1)
    expect(seen[0].path).toBe('/v1/chat/completions')
    expect(seen[0].auth).toBe('Bearer sk-test-123')
    const body = seen[0].body
    expect(body).toMatchObject({ model: 'fake-mini', temperature: 0.3, max_tokens: 100 })
    expect(body.messages[0].role).toBe('system')
    expect(body.messages[0].content).toContain('You are Acme.')
    expect(body.messages[1]).toEqual({ role: 'user', content: 'When do you open?' })
    expect(body.tools).toBeUndefined()
    expect(openai.models).toEqual(['fake-mini', 'fake-large'])
  })

  it('sends tools as functions and maps tool_calls back; largeModel picks OPENAI_LARGE_MODEL', async () => {
    verifies('engine.openai')
    script = [
      [
        200,
        completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'capture_lead', arguments: '{"email":"a@b.co"}' } },
            ],
          },
          'fake-large',
        ),
      ],
    ]
    const tool = {
      name: 'capture_lead',
      description: 'Record a lead',
      parameters: { type: 'object', properties: { email: { type: 'string' } } },
    }
    const r = await openai.complete({
      system: 's',
      messages: [{ role: 'user', content: 'call me back at a@b.co' }],
      tools: [tool],
      largeModel: true,
    })
    expect(r.toolCalls).toEqual([{ name: 'capture_lead', arguments: { email: 'a@b.co' } }])
    expect(r.text).toBe('')
    expect(seen[0].body.model).toBe('fake-large')
    expect(seen[0].body.tools).toEqual([{ type: 'function', function: tool }])
  })

  it('retries once on a 500, then answers', async () => {
    verifies('engine.openai')
    script = [
      [500, { error: { message: 'boom' } }],
      [200, completion({ content: '[UNANSWERED] I do not know that.' })],
    ]
    const r = await openai.complete({ system: 's', messages: [{ role: 'user', content: 'Do you sell boats?' }] })
    expect(seen).toHaveLength(2)
    expect(r).toMatchObject({ text: 'I do not know that.', unanswered: true })
  })

  it('gives up after the one retry with an error naming the status, never the key', async () => {
    script = [
      [429, { error: { message: 'slow down' } }],
      [503, { error: { message: 'busy' } }],
    ]
    const e = await openai.complete({ system: 's', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => new Error('resolved'),
      (x: Error) => x,
    )
    expect(seen).toHaveLength(2)
    expect(e.message).toMatch(/\[chat\] \[openai\].*503/)
    expect(e.message).not.toContain('sk-test-123')
  })

  it('writes build outputs through complete, keeping refinement rules verbatim', async () => {
    verifies('engine.openai')
    script = [
      [200, completion({ content: 'Acme sells bikes. Service costs €49.' })],
      [200, completion({ content: 'Hello, welcome to Acme!' })],
      [200, completion({ content: 'You are the Acme phone agent.' })],
    ]
    expect(await openai.summarize([{ title: 'Home', text: 'Acme sells bikes.' }], { maxChars: 20 })).toBe(
      'Acme sells bikes. Se',
    )
    expect(seen[0].body.messages[1].content).toContain('# Home\nAcme sells bikes.')
    const input = {
      businessName: 'Acme',
      websiteUrl: 'https://acme.example',
      summary: 'Acme sells bikes.',
      language: 'en',
      agentType: 'support',
      refinementRules: ['Never discuss competitors.'],
    }
    expect(await openai.writeGreeting(input)).toBe('Hello, welcome to Acme!')
    const prompt = await openai.writeInstructions({ ...input, surface: 'phone' })
    expect(prompt).toMatch(/^You are the Acme phone agent\.[\s\S]*- Never discuss competitors\.$/)
    expect(seen[2].body.messages[0].content).toMatch(/phone/)
  })
})
