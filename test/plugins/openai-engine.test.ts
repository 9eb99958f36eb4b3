// The openai engine against a local fake server speaking the /chat/completions protocol: no network. With
// stream: true the fake answers Server-Sent Events, written piece by piece with pauses, so the tests see
// deltas arrive while the fake is still writing.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ChatDelta } from '~/kit/chat-engine'
import openai, { SseParser, STREAM_LIMITS } from '../../providers/chat/openai'
import { verifies } from '../requirements'

interface Seen {
  path: string
  auth: string | undefined
  body: any
}
/** A streamed answer: each write is one network write, `gapMs` apart. */
class Sse {
  constructor(
    readonly writes: (string | Buffer)[],
    readonly opts: { gapMs?: number; firstDelayMs?: number; cutAfter?: number; noEnd?: boolean } = {},
  ) {}
}
let server: Server
let seen: Seen[] = []
// Each request takes the next scripted answer: [status, body, delay before answering] or a stream.
let script: ([number, unknown] | [number, unknown, number] | Sse)[] = []
// What the fake did with the last stream: when each write went out, and whether the client hung up first.
let log: { writes: number[]; hungUp: boolean } = { writes: [], hungUp: false }

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))
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
// The chunk objects of the streaming protocol.
const chunk = (delta: object, finish: string | null = null, model = 'fake-mini') => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model,
  choices: [{ index: 0, delta, finish_reason: finish }],
})
const usage = (input: number, output: number) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'fake-mini',
  choices: [],
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
})
const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`
const DONE = 'data: [DONE]\n\n'
/** A whole text answer, one write per token (the first with the role), then finish, usage and [DONE]. */
const tokens = (...texts: string[]) => {
  const writes = texts.map((t) => data(chunk({ content: t })))
  writes[0] = data(chunk({ role: 'assistant', content: '' })) + (writes[0] ?? '')
  return [...writes, data(chunk({}, 'stop')), data(usage(42, 7)), DONE]
}
const saved = { ...process.env }
const limits = { ...STREAM_LIMITS }

beforeAll(async () => {
  server = createServer(async (req, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(await readBody(req)) })
    const next = script.shift() ?? [500, { error: { message: 'no scripted answer' } }]
    if (!(next instanceof Sse)) {
      const [status, body, delay] = next
      if (delay) await sleep(delay)
      if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      return
    }
    const current = { writes: [] as number[], hungUp: false }
    log = current
    res.on('close', () => {
      if (!res.writableFinished) current.hungUp = true
    })
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.flushHeaders()
    if (next.opts.firstDelayMs) await sleep(next.opts.firstDelayMs)
    for (const [i, w] of next.writes.entries()) {
      if (i > 0 && next.opts.gapMs) await sleep(next.opts.gapMs)
      if (res.destroyed) return
      res.write(w)
      current.writes.push(performance.now())
      // Cut off: the connection drops mid-answer, with no end to the chunked body.
      if (next.opts.cutAfter === i) {
        await sleep(20)
        res.socket?.destroy()
        return
      }
    }
    if (!next.opts.noEnd) res.end()
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
  server.closeAllConnections()
  await new Promise((ok) => server.close(ok))
})
beforeEach(() => {
  seen = []
  script = []
  Object.assign(STREAM_LIMITS, limits)
})

/** Every delta with the time it arrived; the error, if the stream failed, after the deltas before it. */
async function collect(it: AsyncIterable<ChatDelta>, each?: (d: ChatDelta) => unknown) {
  const got: { d: ChatDelta; at: number }[] = []
  let error: Error | null = null
  try {
    for await (const d of it) {
      got.push({ d, at: performance.now() })
      await each?.(d)
    }
  } catch (e) {
    error = e as Error
  }
  const deltas = got.map((g) => g.d)
  const text = deltas.map((d) => (d.type === 'text' ? d.text : '')).join('')
  return { got, deltas, text, error }
}
const ask = (content: string, extra: object = {}) =>
  openai.stream!({ system: 'You are Acme.', messages: [{ role: 'user', content }], ...extra })

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

  it("passes the caller's abort through as is, with no retry", async () => {
    verifies('engine.openai')
    script = [[200, completion({ content: 'late' }), 3000]]
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('caller hung up')), 100)
    const started = performance.now()
    await expect(
      openai.complete({ system: 's', messages: [{ role: 'user', content: 'hi' }], signal: controller.signal }),
    ).rejects.toThrow('caller hung up')
    expect(performance.now() - started).toBeLessThan(1000)
    expect(seen).toHaveLength(1)
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

describe('openai engine: streaming', () => {
  it('asks for a stream with usage and yields text deltas as the tokens arrive', async () => {
    verifies('engine.openai')
    script = [new Sse(tokens('We ', 'open ', 'at ', '9am', '.'), { gapMs: 120 })]
    const r = await collect(ask('When do you open?', { temperature: 0.3, maxTokens: 100 }))
    expect(r.error).toBeNull()
    expect(r.text).toBe('We open at 9am.')
    expect(r.deltas.filter((d) => d.type === 'text').length).toBeGreaterThan(2)
    expect(r.deltas.at(-1)).toEqual({
      type: 'done',
      unanswered: false,
      usage: { input: 42, output: 7 },
      model: 'fake-mini',
    })
    expect(r.deltas.filter((d) => d.type === 'done')).toHaveLength(1)
    // The first words were in hand while the fake was still writing the last ones (four gaps of 120 ms).
    const lastToken = log.writes[4]
    expect(r.got[0].at).toBeLessThan(lastToken - 300)
    expect(seen).toHaveLength(1)
    expect(seen[0].path).toBe('/v1/chat/completions')
    expect(seen[0].auth).toBe('Bearer sk-test-123')
    expect(seen[0].body).toMatchObject({
      model: 'fake-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.3,
      max_tokens: 100,
    })
    expect(seen[0].body.messages[0].content).toContain('[UNANSWERED]')
    expect(seen[0].body.messages[1]).toEqual({ role: 'user', content: 'When do you open?' })
  })

  it('holds the [UNANSWERED] marker back, never shows it, and reports it in done', async () => {
    verifies('engine.openai')
    const raw = ['  [UN', 'ANSWER', 'ED]', ' Sorry,', ' I do not ', 'know that.', '  \n']
    script = [new Sse(tokens(...raw), { gapMs: 10 }), [200, completion({ content: raw.join('') })]]
    const r = await collect(ask('Do you sell boats?'))
    expect(r.error).toBeNull()
    for (const d of r.deltas) if (d.type === 'text') expect(d.text).not.toMatch(/\[|UN|ANSWER|\]/)
    expect(r.text).toBe('Sorry, I do not know that.')
    expect(r.deltas.at(-1)).toMatchObject({ type: 'done', unanswered: true })
    // The same words as complete() makes of the same answer.
    const whole = await openai.complete({ system: 's', messages: [{ role: 'user', content: 'Do you sell boats?' }] })
    expect(whole).toMatchObject({ text: r.text, unanswered: true })
  })

  it('shows a start that only looked like the marker', async () => {
    for (const [raw, text] of [
      [['[', 'Note] ', 'we are closed.'], '[Note] we are closed.'],
      [['[UNANS'], '[UNANS'],
      [['[UNANSWERED', ']'], ''],
    ] as const) {
      script = [new Sse(tokens(...raw))]
      const r = await collect(ask('hi'))
      expect(r.text, raw.join('')).toBe(text)
      expect(r.deltas.at(-1), raw.join('')).toMatchObject({ type: 'done', unanswered: text === '' })
    }
  })

  it('assembles tool calls from their fragments, each once complete', async () => {
    verifies('engine.openai')
    const call = (index: number, fn: object, id?: string) =>
      data(chunk({ tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] }))
    script = [
      new Sse(
        [
          data(chunk({ role: 'assistant', content: null })),
          call(0, { name: 'capture_lead', arguments: '' }, 'call_1'),
          call(0, { arguments: '{"em' }),
          call(0, { arguments: 'ail":"a@b' }),
          call(0, { arguments: '.co"}' }),
          call(1, { name: 'transfer_call', arguments: '{"destination":' }, 'call_2'),
          call(1, { arguments: '"sales"}' }),
          data(chunk({}, 'tool_calls')),
          data(usage(50, 20)),
          DONE,
        ],
        { gapMs: 60 },
      ),
    ]
    const tools = [
      { name: 'capture_lead', description: 'Record a lead', parameters: { type: 'object' } },
      { name: 'transfer_call', description: 'Transfer', parameters: { type: 'object' } },
    ]
    const r = await collect(ask('call me back at a@b.co, or put me through to sales', { tools }))
    expect(r.error).toBeNull()
    expect(r.deltas).toEqual([
      { type: 'tool_call', call: { name: 'capture_lead', arguments: { email: 'a@b.co' } } },
      { type: 'tool_call', call: { name: 'transfer_call', arguments: { destination: 'sales' } } },
      { type: 'done', unanswered: false, usage: { input: 50, output: 20 }, model: 'fake-mini' },
    ])
    // The first call was whole when the second began, before the answer finished.
    expect(r.got[0].at).toBeLessThan(log.writes[7])
    expect(seen[0].body.tools).toHaveLength(2)
  })

  it('reads events split across network chunks, CRLF line ends, comments and multi-byte characters', async () => {
    const first = JSON.stringify(chunk({ content: 'Hel' }))
    const cafe = Buffer.from(data(chunk({ content: 'lo, café ☕' })))
    const cup = cafe.indexOf(Buffer.from('☕')) + 1
    script = [
      new Sse(
        [
          ': keep-alive\r\n\r\n',
          `data: ${first.slice(0, 30)}`,
          `${first.slice(30)}\r`,
          '\n\r\n',
          cafe.subarray(0, cup),
          cafe.subarray(cup),
          `data:${JSON.stringify(chunk({ content: '.' }))}\r\n\r\n: ping\n\n`,
          data(chunk({}, 'stop')) + data(usage(3, 4)) + DONE,
        ],
        { gapMs: 15 },
      ),
    ]
    const r = await collect(ask('hi'))
    expect(r.error).toBeNull()
    expect(r.text).toBe('Hello, café ☕.')
    expect(r.deltas.at(-1)).toMatchObject({ type: 'done', usage: { input: 3, output: 4 } })
  })

  it('parses SSE after the EventSource rules, whatever the pieces', () => {
    const stream = ': c\r\ndata: a\r\ndata:b\r\n\r\nevent: x\ndata:  c\n\ndata\n\nid: 1\r\rdata: d\r'
    const expected = ['a\nb', ' c', '', 'd']
    for (let size = 1; size <= stream.length; size++) {
      const p = new SseParser()
      const events: string[] = []
      for (let at = 0; at < stream.length; at += size) events.push(...p.push(stream.slice(at, at + size)))
      events.push(...p.end())
      expect(events, `pieces of ${size}`).toEqual(expected)
    }
  })

  it('stops at an abort mid-stream with the reason, and hangs up on the server', async () => {
    verifies('engine.openai')
    script = [new Sse(tokens('Hello. ', 'This ', 'is ', 'long.'), { gapMs: 2000 })]
    const controller = new AbortController()
    const reason = new Error('caller hung up')
    const started = performance.now()
    const r = await collect(ask('hi', { signal: controller.signal }), () => controller.abort(reason))
    expect(r.error).toBe(reason)
    expect(r.deltas).toEqual([{ type: 'text', text: 'Hello.' }])
    expect(performance.now() - started).toBeLessThan(1500)
    await sleep(50)
    expect(log.hungUp).toBe(true)
    // Events already received in the same network chunk are not shown after the abort either.
    script = [new Sse([tokens('One. ', 'Two. ', 'Three.').join('')])]
    const controller2 = new AbortController()
    const batch = await collect(ask('hi', { signal: controller2.signal }), () => controller2.abort(reason))
    expect(batch.error).toBe(reason)
    expect(batch.deltas).toEqual([{ type: 'text', text: 'One.' }])
    seen = seen.slice(0, 1)
    // An abort before the request makes none.
    const before = await collect(ask('hi', { signal: AbortSignal.abort(reason) }))
    expect(before.error).toBe(reason)
    expect(seen).toHaveLength(1)
  })

  it('closes the request when the caller stops reading early', async () => {
    script = [new Sse(tokens('One. ', 'Two. ', 'Three.'), { gapMs: 300 })]
    for await (const d of ask('hi')) if (d.type === 'text') break
    await sleep(100)
    expect(log.hungUp).toBe(true)
  })

  it('retries once on a 429 or 5xx before the stream starts, never after', async () => {
    verifies('engine.openai')
    STREAM_LIMITS.retryDelayMs = 50
    script = [[500, { error: { message: 'boom' } }], new Sse(tokens('Hello', '.'))]
    const ok = await collect(ask('hi'))
    expect(ok.error).toBeNull()
    expect(ok.text).toBe('Hello.')
    expect(seen).toHaveLength(2)

    seen = []
    script = [
      [429, { error: { message: 'slow down sk-test-123' } }],
      [503, { error: { message: 'busy, key sk-test-123' } }],
    ]
    const twice = await collect(ask('hi'))
    expect(seen).toHaveLength(2)
    expect(twice.deltas).toEqual([])
    expect(twice.error?.message).toMatch(
      /^\[chat\] \[openai\] http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed \(503\): busy/,
    )
    expect(twice.error?.message).not.toContain('sk-test-123')

    seen = []
    script = [[400, { error: { message: 'bad model' } }]]
    const refused = await collect(ask('hi'))
    expect(seen).toHaveLength(1)
    expect(refused.error?.message).toMatch(/failed \(400\): bad model/)
  })

  it('fails a stream cut off mid-way, without a retry and without hanging', async () => {
    verifies('engine.openai')
    script = [new Sse(tokens('We ', 'open ', 'at ', '9am.'), { gapMs: 30, cutAfter: 1 }), new Sse(tokens('again'))]
    const started = performance.now()
    const cut = await collect(ask('hi'))
    expect(cut.error?.message).toMatch(/^\[chat\] \[openai\] .*failed \(200\)/)
    expect(cut.text).toBe('We open')
    expect(cut.deltas.some((d) => d.type === 'done')).toBe(false)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(seen).toHaveLength(1)

    // A body that ends cleanly but before finish_reason is cut off as well.
    script = [new Sse(tokens('We ', 'open').slice(0, 2))]
    const short = await collect(ask('hi'))
    expect(short.error?.message).toMatch(/failed \(200\): the event stream ended before the answer did/)
  })

  it('bounds the wait for the first byte, the whole wait and the size', async () => {
    STREAM_LIMITS.firstByteMs = 200
    script = [new Sse(tokens('late'), { firstDelayMs: 1500 })]
    let started = performance.now()
    const silent = await collect(ask('hi'))
    expect(silent.error?.message).toMatch(/failed \(200\): no first byte within 200 ms/)
    expect(performance.now() - started).toBeLessThan(1000)

    Object.assign(STREAM_LIMITS, limits, { timeoutMs: 300 })
    script = [new Sse(tokens('a ', 'b ', 'c'), { gapMs: 1000 })]
    started = performance.now()
    const slow = await collect(ask('hi'))
    expect(slow.error?.message).toMatch(/failed \(200\): not finished within 300 ms/)
    expect(slow.text).toBe('a')
    expect(performance.now() - started).toBeLessThan(1000)

    // Time the caller spends between deltas is not the server's: a slow reader is not cut off.
    script = [new Sse(tokens('a ', 'b ', 'c ', 'd'))]
    const patient = await collect(ask('hi'), () => sleep(120))
    expect(patient.error).toBeNull()
    expect(patient.text).toBe('a b c d')

    Object.assign(STREAM_LIMITS, limits)
    script = [new Sse([data(chunk({ content: 'x' })), `: ${'x'.repeat(STREAM_LIMITS.maxBytes)}\n\n`, ...tokens('y')])]
    const big = await collect(ask('hi'))
    expect(big.error?.message).toMatch(/failed \(200\): event stream over 2097152 bytes/)
  })

  it('names a server that is not there', async () => {
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1'
    try {
      const r = await collect(ask('hi'))
      expect(r.error?.message).toMatch(
        /^\[chat\] \[openai\] http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions failed \(no response\): fetch failed: \w/,
      )
    } finally {
      process.env.OPENAI_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`
    }
  })

  it('takes a whole JSON completion from a server that does not stream', async () => {
    script = [[200, completion({ content: '  Plain answer.  ' }, 'fake-old')]]
    const r = await collect(ask('hi'))
    expect(r.deltas).toEqual([
      { type: 'text', text: 'Plain answer.' },
      { type: 'done', unanswered: false, usage: { input: 42, output: 7 }, model: 'fake-old' },
    ])
  })

  it('fails on an error event inside the stream, naming no key', async () => {
    script = [new Sse([data(chunk({ content: 'Hi' })), data({ error: { message: 'overloaded sk-test-123' } })])]
    const r = await collect(ask('hi'))
    expect(r.error?.message).toMatch(/failed \(200\): overloaded \[redacted\]/)
  })
})
