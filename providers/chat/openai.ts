// Any OpenAI-compatible /chat/completions endpoint (OpenAI, Azure-style gateways, vLLM, Ollama…).
// Settings are read at call time, not at import, so tests and operators can point it elsewhere without a rebuild.
import { ofetch, FetchError } from 'ofetch'
import {
  defineChatEngine,
  type BuildInput,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type ToolCall,
} from '~/kit/chat-engine'
import { businessNameOf } from './_prompts'
import { extractWithOpenAI } from './_extract-openai'
import { clientSpan, providerCall } from '~/kit/tracing'

const NAME = 'openai'
const TIMEOUT_MS = 30_000
/**
 * Bounds of a streamed answer (a mutable object so tests can shorten them). The times count only waiting on
 * the server, not the time the caller takes between deltas (a voice call may speak a sentence meanwhile).
 */
export const STREAM_LIMITS = {
  /** The whole event stream; a spoken answer is a few kilobytes. */
  maxBytes: 2 * 1024 * 1024,
  /** From sending the request to the first byte of the answer (headers and the first event). */
  firstByteMs: 15_000,
  /** All the waiting on the server, first byte included. */
  timeoutMs: TIMEOUT_MS,
  /** Before the one retry of a 429 or 5xx (as complete()). */
  retryDelayMs: 500,
}
const RETRY_STATUS = new Set([429, 500, 502, 503, 504])
// The model cannot flag "I did not know" out of band, so it is asked to prefix such replies with this marker.
const UNANSWERED = '[UNANSWERED]'

const settings = () => ({
  baseUrl: (process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
  apiKey: process.env.OPENAI_API_KEY || '',
  model: process.env.OPENAI_MODEL || 'gpt-4o-mini',
  largeModel: process.env.OPENAI_LARGE_MODEL || process.env.OPENAI_MODEL || 'gpt-4o-mini',
})

interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}
interface Completion {
  model?: string
  choices: { message: { content: string | null; tool_calls?: WireToolCall[] } }[]
  usage?: { prompt_tokens?: number; completion_tokens?: number }
}

// The protocol only accepts role "tool" right after the assistant's tool_calls (by id), which our transcript
// does not keep; a system note carries the result instead.
const toWire = (m: ChatMessage) =>
  m.role === 'tool'
    ? { role: 'system', content: `Result of tool ${m.name ?? ''}: ${m.content}` }
    : { role: m.role, content: m.content }

const requestBody = (req: ChatRequest, model: string) => ({
  model,
  messages: [
    {
      role: 'system',
      content: `${req.system}\n\nIf the information you were given does not answer the user's question, start your reply with ${UNANSWERED}.`,
    },
    ...req.messages.map(toWire),
  ],
  ...(req.tools?.length
    ? {
        tools: req.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        })),
      }
    : {}),
  ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
  ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
})

async function complete(req: ChatRequest): Promise<ChatResponse> {
  const s = settings()
  const model = req.largeModel ? s.largeModel : s.model
  const body = requestBody(req, model)
  let res: Completion
  try {
    res = await clientSpan(`${NAME} complete`, providerCall(NAME, 'complete'), (trace) =>
      ofetch<Completion>(`${s.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: s.apiKey ? { ...trace, authorization: `Bearer ${s.apiKey}` } : trace,
        body,
        // ofetch drops its own timeout when given a signal, so the caller's signal carries the timeout too.
        signal: req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(TIMEOUT_MS)]) : undefined,
        timeout: TIMEOUT_MS,
        retry: 1,
        retryDelay: 500,
        retryStatusCodes: [429, 500, 502, 503, 504],
        // A caller who hung up gets no retry.
        onRequestError: () => req.signal?.throwIfAborted(),
      }),
    )
  } catch (e) {
    // The caller's own abort passes through untouched, so the host can tell it from a failure.
    if (req.signal?.aborted) throw req.signal.reason
    // The error names the status and endpoint, never the key.
    const status = e instanceof FetchError ? (e.statusCode ?? 'no response') : 'no response'
    throw new Error(
      `[chat] [${NAME}] ${s.baseUrl}/chat/completions failed (${status}): ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    )
  }
  return toResponse(res, model)
}

function toResponse(res: Completion, model: string): ChatResponse {
  const message = res.choices?.[0]?.message
  if (!message) throw new Error(`[chat] [${NAME}] the answer holds no choices`)
  const raw = (message.content ?? '').trim()
  const unanswered = raw.startsWith(UNANSWERED)
  return {
    text: unanswered ? raw.slice(UNANSWERED.length).trim() : raw,
    toolCalls: (message.tool_calls ?? []).map((c) => ({
      name: c.function.name,
      arguments: parseArgs(c.function.arguments),
    })),
    unanswered,
    usage: { input: res.usage?.prompt_tokens ?? 0, output: res.usage?.completion_tokens ?? 0 },
    model: res.model ?? model,
  }
}

// ---------------------------------------------------------------------------------------------------------
// Streaming: /chat/completions with stream: true answers Server-Sent Events, each `data:` a chunk object
// (choices[0].delta.content, delta.tool_calls fragments keyed by index, finish_reason), then with
// stream_options.include_usage a chunk with empty choices and the usage, then `data: [DONE]`.

interface StreamChunk {
  model?: string
  choices?: {
    index?: number
    delta?: {
      content?: string | null
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]
    }
    finish_reason?: string | null
  }[]
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null
  error?: { message?: string } | string
}

/**
 * Events from text that arrives in arbitrary pieces (an event, even a line or a "\r\n", may be split across
 * network chunks), after the WHATWG EventSource rules: lines end in \r\n, \n or \r; a blank line ends an
 * event; a line starting with ":" is a comment (keep-alives); "data:" loses one leading space and several
 * data lines join with \n; other fields do not matter here.
 */
export class SseParser {
  private line = ''
  private data: string[] = []
  private afterCr = false

  /** The data of each event this piece completes. */
  push(text: string): string[] {
    const events: string[] = []
    let at = this.afterCr && text.startsWith('\n') ? 1 : 0
    this.afterCr = false
    const eol = /\r\n|\r|\n/g
    eol.lastIndex = at
    for (let m = eol.exec(text); m; m = eol.exec(text)) {
      this.take(this.line + text.slice(at, m.index), events)
      this.line = ''
      at = m.index + m[0].length
      // A "\r" at the very end may be the first half of a "\r\n".
      if (m[0] === '\r' && at === text.length) this.afterCr = true
    }
    this.line += text.slice(at)
    return events
  }

  /** At the end of the stream: an event its server did not close with a blank line still counts. */
  end(): string[] {
    const events: string[] = []
    if (this.line) this.take(this.line, events)
    this.line = ''
    this.take('', events)
    return events
  }

  private take(line: string, events: string[]) {
    if (line === '') {
      if (this.data.length) events.push(this.data.join('\n'))
      this.data = []
      return
    }
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    if (field !== 'data') return
    const value = colon < 0 ? '' : line.slice(colon + 1)
    this.data.push(value.startsWith(' ') ? value.slice(1) : value)
  }
}

/**
 * The answer's text as the model writes it, shaped as complete() shapes the whole: leading and trailing
 * whitespace dropped, and the [UNANSWERED] marker never shown. The first characters are held until they
 * either are the marker or cannot become it; trailing whitespace is held until more text follows it.
 */
class AnswerText {
  unanswered = false
  private head: string | null = ''
  private started = false
  private space = ''

  /** What may be shown of this piece now (possibly nothing). */
  push(piece: string): string {
    if (this.head !== null) {
      const head = (this.head + piece).trimStart()
      if (head.length < UNANSWERED.length && UNANSWERED.startsWith(head)) {
        this.head = head
        return ''
      }
      this.head = null
      this.unanswered = head.startsWith(UNANSWERED)
      piece = this.unanswered ? head.slice(UNANSWERED.length) : head
    }
    if (!this.started) {
      piece = piece.trimStart()
      if (!piece) return ''
      this.started = true
    }
    const text = this.space + piece
    const shown = text.trimEnd()
    this.space = text.slice(shown.length)
    return shown
  }

  /** What is left to show when the answer ends: a held start that never became the marker. */
  end(): string {
    const head = this.head
    this.head = null
    return head ? head.trimEnd() : ''
  }
}

/** Tool calls from their fragments: per index, the id and name come first, the arguments in pieces. */
class ToolCalls {
  private open = new Map<number, { id?: string; name: string; args: string }>()

  /** Adds fragments; answers the calls they show to be complete (a later call has started). */
  push(fragments: NonNullable<NonNullable<StreamChunk['choices']>[number]['delta']>['tool_calls']): ToolCall[] {
    const complete: ToolCall[] = []
    for (const f of fragments ?? []) {
      const index = typeof f.index === 'number' ? f.index : 0
      let call = this.open.get(index)
      // Some compatible servers reuse index 0 for every call of a batch, telling them apart by id only.
      if (call && f.id && call.id && f.id !== call.id) {
        complete.push(...this.close((i) => i === index))
        call = undefined
      }
      if (!call) {
        // Calls are streamed one after another: a new index means the earlier ones are whole.
        complete.push(...this.close((i) => i < index))
        call = { id: f.id, name: '', args: '' }
        this.open.set(index, call)
      }
      if (f.id) call.id = f.id
      if (f.function?.name) call.name += f.function.name
      if (f.function?.arguments) call.args += f.function.arguments
    }
    return complete
  }

  /** Every call still open, in order (the answer ended). */
  end(): ToolCall[] {
    return this.close(() => true)
  }

  private close(which: (index: number) => boolean): ToolCall[] {
    const out: ToolCall[] = []
    for (const index of [...this.open.keys()].sort((a, b) => a - b)) {
      if (!which(index)) continue
      const call = this.open.get(index)!
      this.open.delete(index)
      if (call.name) out.push({ name: call.name, arguments: parseArgs(call.args) })
    }
    return out
  }
}

/**
 * The network side of one streamed request: each wait (the response, then each read) is bounded by what is
 * left of the first-byte and overall budgets, and a timer that runs out aborts the request.
 */
function networkClock(limits: typeof STREAM_LIMITS, signal: AbortSignal | undefined) {
  const controller = new AbortController()
  let waited = 0
  let gotByte = false
  let expired: string | null = null
  return {
    signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
    get expired() {
      return expired
    },
    firstByte() {
      gotByte = true
    },
    async wait<T>(step: () => Promise<T>): Promise<T> {
      const overall = limits.timeoutMs - waited
      const first = gotByte ? Number.POSITIVE_INFINITY : limits.firstByteMs - waited
      const ms = Math.max(0, Math.min(overall, first))
      const started = performance.now()
      const timer = setTimeout(() => {
        expired =
          first <= overall
            ? `no first byte within ${limits.firstByteMs} ms`
            : `not finished within ${limits.timeoutMs} ms`
        controller.abort(new Error(expired))
      }, ms)
      try {
        return await step()
      } finally {
        clearTimeout(timer)
        waited += performance.now() - started
      }
    },
    close() {
      controller.abort()
    },
  }
}

async function* stream(req: ChatRequest): AsyncGenerator<ChatDelta> {
  const s = settings()
  const model = req.largeModel ? s.largeModel : s.model
  const url = `${s.baseUrl}/chat/completions`
  const body = JSON.stringify({ ...requestBody(req, model), stream: true, stream_options: { include_usage: true } })
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' }
  if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`
  const limits = { ...STREAM_LIMITS }
  // The error names the status and endpoint, never the key (a server may echo it back).
  const redact = (m: string) => (s.apiKey ? m.split(s.apiKey).join('[redacted]') : m)
  const failure = (status: number | string, detail: string) =>
    new Error(`[chat] [${NAME}] ${url} failed (${status}): ${redact(detail.replace(/\s+/g, ' ').trim().slice(0, 300))}`)

  for (let attempt = 0; ; attempt++) {
    req.signal?.throwIfAborted()
    const clock = networkClock(limits, req.signal)
    let status: number | 'no response' = 'no response'
    // Turns a failed wait into the error to throw: the caller's abort as is, else what went wrong.
    const broken = (e: unknown) => {
      if (req.signal?.aborted) return req.signal.reason
      // fetch's own message is a bare "fetch failed"; its cause names the network error.
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : ''
      return failure(status, clock.expired ?? (e instanceof Error ? `${e.message}${cause}` : String(e)))
    }
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
    try {
      let res: Response
      try {
        // decisions "Tracing": the span covers the request up to the answer's headers (its first byte).
        res = await clock.wait(() =>
          clientSpan(
            `${NAME} stream`,
            providerCall(NAME, 'stream'),
            (trace) => fetch(url, { method: 'POST', headers: { ...headers, ...trace }, body, signal: clock.signal }),
            (r) => r.status,
          ),
        )
      } catch (e) {
        throw broken(e)
      }
      status = res.status
      reader = res.body?.getReader()
      const read = async () => {
        try {
          return reader ? await clock.wait(() => reader!.read()) : { done: true as const, value: undefined }
        } catch (e) {
          throw broken(e)
        }
      }

      if (!res.ok) {
        // The error document is short: read a little of it for its message.
        let text = ''
        const decoder = new TextDecoder()
        for (let next = await read(); !next.done && text.length < 4096; next = await read())
          text += decoder.decode(next.value, { stream: true })
        if (attempt === 0 && RETRY_STATUS.has(res.status)) {
          await reader?.cancel().catch(() => {})
          await pause(limits.retryDelayMs, req.signal)
          continue
        }
        throw failure(status, errorMessage(text) || `HTTP ${status}`)
      }

      // A server that does not stream answers the whole completion as JSON: it is yielded whole.
      if (/^application\/json/i.test(res.headers.get('content-type') ?? '')) {
        let text = ''
        let bytes = 0
        const decoder = new TextDecoder()
        for (let next = await read(); !next.done; next = await read()) {
          bytes += next.value.byteLength
          if (bytes > limits.maxBytes) throw failure(status, `answer over ${limits.maxBytes} bytes`)
          text += decoder.decode(next.value, { stream: true })
        }
        let whole: ChatResponse
        try {
          whole = toResponse(JSON.parse(text) as Completion, model)
        } catch (e) {
          throw failure(status, `the answer is neither an event stream nor a completion: ${(e as Error).message}`)
        }
        if (whole.toolCalls.length) for (const call of whole.toolCalls) yield { type: 'tool_call', call }
        else if (whole.text) yield { type: 'text', text: whole.text }
        yield { type: 'done', unanswered: whole.unanswered, usage: whole.usage, model: whole.model }
        return
      }

      const parser = new SseParser()
      const decoder = new TextDecoder()
      const answer = new AnswerText()
      const calls = new ToolCalls()
      let answeredModel = model
      let usage = { input: 0, output: 0 }
      let finished = false
      let ended = false
      let bytes = 0
      while (!ended) {
        const next = await read()
        let events: string[]
        if (next.done) {
          events = [...parser.push(decoder.decode()), ...parser.end()]
          ended = true
        } else {
          if (next.value.byteLength) clock.firstByte()
          bytes += next.value.byteLength
          if (bytes > limits.maxBytes) throw failure(status, `event stream over ${limits.maxBytes} bytes`)
          events = parser.push(decoder.decode(next.value, { stream: true }))
        }
        for (const data of events) {
          // Events already read are not shown once the caller has aborted.
          req.signal?.throwIfAborted()
          if (data === '[DONE]') {
            ended = finished = true
            break
          }
          let chunk: StreamChunk
          try {
            chunk = JSON.parse(data)
          } catch {
            throw failure(status, `an event is not JSON: ${data.slice(0, 80)}`)
          }
          if (chunk.error)
            throw failure(
              status,
              typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? 'error event'),
            )
          if (typeof chunk.model === 'string' && chunk.model) answeredModel = chunk.model
          if (chunk.usage) usage = { input: chunk.usage.prompt_tokens ?? 0, output: chunk.usage.completion_tokens ?? 0 }
          const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0)
          if (!choice) continue
          const content = choice.delta?.content
          if (typeof content === 'string' && content) {
            const known = answer.unanswered
            const text = answer.push(content)
            // Said as soon as the marker is read, before any text: a voice call then says the fallback instead.
            if (answer.unanswered && !known) yield { type: 'unanswered' }
            if (text) yield { type: 'text', text }
          }
          for (const call of calls.push(choice.delta?.tool_calls)) yield { type: 'tool_call', call }
          if (choice.finish_reason) finished = true
        }
      }
      req.signal?.throwIfAborted()
      // A stream that stops before its finish_reason (or [DONE]) was cut off: the answer is not whole.
      if (!finished) throw failure(status, 'the event stream ended before the answer did')
      const rest = answer.end()
      if (rest) yield { type: 'text', text: rest }
      for (const call of calls.end()) yield { type: 'tool_call', call }
      yield { type: 'done', unanswered: answer.unanswered, usage, model: answeredModel }
      return
    } finally {
      // Also when the caller stops early: the download must not go on.
      clock.close()
      await reader?.cancel().catch(() => {})
    }
  }
}

/** The server's own message from an error document ({"error": {"message"}} or text). */
function errorMessage(text: string): string {
  try {
    const j = JSON.parse(text)
    return typeof j?.error === 'string' ? j.error : String(j?.error?.message ?? '')
  } catch {
    return text
  }
}

/** Waits ms, or rejects with the signal's reason as soon as it aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((ok, ko) => {
    if (signal?.aborted) return ko(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      ko(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      ok()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function parseArgs(json: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json)
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {}
  } catch {
    return {}
  }
}

const ask = async (system: string, user: string, maxTokens?: number) =>
  (await complete({ system, messages: [{ role: 'user', content: user }], temperature: 0.2, maxTokens })).text

const brief = (i: BuildInput) =>
  [
    `Business: ${businessNameOf(i)}`,
    `Website: ${i.websiteUrl}`,
    `Language: ${i.language}`,
    `Agent type: ${i.agentType}`,
    ...(i.role ? [`Role: ${i.role}`] : []),
    '',
    'Knowledge summary:',
    i.summary,
  ].join('\n')

const SURFACE = {
  phone:
    'a phone agent: short spoken answers of one or two sentences, numbers spelled out as spoken, no URLs or formatting',
  chat: 'a written website chat: concise answers, short lists and links to the website allowed',
  voice_chat: 'a spoken website voice chat: natural spoken style, short sentences, no URLs or formatting',
}

export default defineChatEngine({
  name: NAME,
  get models() {
    const s = settings()
    return [...new Set([s.model, s.largeModel])]
  },
  complete,
  stream,
  extract: extractWithOpenAI,
  async summarize(sources, opts) {
    const maxChars = opts?.maxChars ?? 4000
    const text = sources
      .map((s) => `# ${s.title}\n${s.text}`)
      .join('\n\n')
      .slice(0, 120_000)
    const out = await ask(
      `You condense website pages into a knowledge summary for a customer-service agent. Keep every concrete fact (prices, phone numbers, e-mail addresses, opening hours, addresses, policies, products and services). Write plain sentences, no marketing language, no invented facts, at most ${maxChars} characters.${opts?.language ? ` Write it in the language whose BCP-47 tag is ${opts.language}.` : ''}`,
      text,
      Math.ceil(maxChars / 3),
    )
    return out.slice(0, maxChars)
  },
  async writeGreeting(input) {
    return ask(
      'Write the one-sentence opening line a customer-service agent says when a conversation starts. Name the business. Write it in the given language. Answer with the greeting only.',
      brief(input),
      120,
    )
  },
  async writeInstructions(input) {
    const rules = (input.refinementRules ?? []).filter((r) => r.trim())
    const prompt = await ask(
      `Write the system prompt for ${SURFACE[input.surface]}. It states the agent's role for the business, the style for this surface, the key facts from the knowledge summary, and that the agent answers only from its knowledge and offers to take contact details otherwise. Answer with the prompt only.`,
      brief(input),
      1200,
    )
    // The business's own rules are appended verbatim so no model paraphrase can drop them.
    return rules.length
      ? `${prompt}\n\nRules set by the business (always follow them):\n${rules.map((r) => `- ${r}`).join('\n')}`
      : prompt
  },
})
