// A local OpenAI-compatible /chat/completions server whose answers a test scripts: for each request, a
// function of the last user message picks the words, their pace, tool calls, or a failure in the middle of
// the stream. It speaks Server-Sent Events when asked to stream (the chunks OpenAI sends: delta.content,
// delta.tool_calls fragments, finish_reason, a usage chunk, [DONE]) and one JSON completion otherwise, so
// the service's openai engine runs end to end against it with no network.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ChatScript {
  /** The answer's text; streamed word by word (each word with the space before it). */
  text?: string
  /** Tool calls the answer makes instead of text ({name, arguments}). */
  tools?: { name: string; arguments: Record<string, unknown> }[]
  /** Before the first chunk, and between two words. */
  firstTokenMs?: number
  tokenMs?: number
  /** Cut the connection after this many words (a provider failing mid-stream). */
  failAfterWords?: number
}

export interface FakeChatRequest {
  stream: boolean
  messages: { role: string; content: string }[]
  /** The last user message. */
  user: string
  tools: string[]
  /** The request's other settings as sent (model, temperature, max_tokens). */
  settings: { model?: unknown; temperature?: unknown; max_tokens?: unknown }
  /** The request's response_format as sent (structured output), if any. */
  responseFormat?: any
  /** Date.now() when the answer's last byte was written (unset if it failed or is still being written). */
  finishedAt?: number
}

export interface FakeChat {
  /** OPENAI_BASE_URL for the server under test (ends in /v1). */
  url: string
  requests: FakeChatRequest[]
  /** Picks the script of a request; the default says one short sentence. */
  script: (req: FakeChatRequest) => ChatScript
  close(): Promise<void>
}

const readJson = (req: IncomingMessage) =>
  new Promise<any>((ok, fail) => {
    let s = ''
    req.setEncoding('utf8')
    req.on('data', (c) => (s += c))
    req.on('end', () => {
      try {
        ok(JSON.parse(s))
      } catch (e) {
        fail(e)
      }
    })
    req.on('error', fail)
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const words = (text: string) => text.match(/\s*\S+/g) ?? []

export async function startFakeChat(): Promise<FakeChat> {
  const fake: FakeChat = {
    url: '',
    requests: [],
    script: () => ({ text: 'Happy to help.' }),
    close: async () => {
      server.closeAllConnections()
      await new Promise((ok) => server.close(ok))
    },
  }

  async function answer(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}')
      return
    }
    const body = await readJson(req)
    const messages = (body.messages ?? []) as FakeChatRequest['messages']
    const seen: FakeChatRequest = {
      stream: body.stream === true,
      messages,
      user: [...messages].reverse().find((m) => m.role === 'user')?.content ?? '',
      tools: ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name),
      settings: { model: body.model, temperature: body.temperature, max_tokens: body.max_tokens },
      responseFormat: body.response_format,
    }
    fake.requests.push(seen)
    const script = fake.script(seen)
    const pieces = words(script.text ?? '')
    const model = body.model ?? 'fake-chat'
    const usage = { prompt_tokens: 40, completion_tokens: pieces.length, total_tokens: 40 + pieces.length }
    await sleep(script.firstTokenMs ?? 0)
    if (!seen.stream) {
      await sleep((script.tokenMs ?? 0) * pieces.length)
      const message = {
        role: 'assistant',
        content: script.tools?.length ? null : (script.text ?? ''),
        ...(script.tools?.length
          ? {
              tool_calls: script.tools.map((t, i) => ({
                id: `call_${i}`,
                type: 'function',
                function: { name: t.name, arguments: JSON.stringify(t.arguments) },
              })),
            }
          : {}),
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message, finish_reason: 'stop' }],
          usage,
        }),
      )
      seen.finishedAt = Date.now()
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model, choices, ...extra })}\n\n`,
      )
    send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])
    for (const [i, piece] of pieces.entries()) {
      if (script.failAfterWords !== undefined && i >= script.failAfterWords) {
        // What was written reaches the client first (destroy drops unflushed writes), then the connection dies.
        await sleep(50)
        res.destroy()
        return
      }
      if (i) await sleep(script.tokenMs ?? 0)
      send([{ index: 0, delta: { content: piece }, finish_reason: null }])
    }
    for (const [i, t] of (script.tools ?? []).entries()) {
      const args = JSON.stringify(t.arguments)
      const half = Math.ceil(args.length / 2)
      // Tool calls arrive in fragments: the name first, the arguments in two pieces.
      send([
        {
          index: 0,
          delta: {
            tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: t.name, arguments: '' } }],
          },
          finish_reason: null,
        },
      ])
      send([
        {
          index: 0,
          delta: { tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] },
          finish_reason: null,
        },
      ])
      send([
        {
          index: 0,
          delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] },
          finish_reason: null,
        },
      ])
    }
    send([{ index: 0, delta: {}, finish_reason: script.tools?.length ? 'tool_calls' : 'stop' }])
    if (body.stream_options?.include_usage) send([], { usage })
    res.end('data: [DONE]\n\n')
    seen.finishedAt = Date.now()
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((e) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: String(e) } }))
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return fake
}
