// Any OpenAI-compatible /chat/completions endpoint (OpenAI, Azure-style gateways, vLLM, Ollama…).
// Settings are read at call time, not at import, so tests and operators can point it elsewhere without a rebuild.
import { ofetch, FetchError } from 'ofetch'
import {
  defineChatEngine,
  type BuildInput,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
} from '~/kit/chat-engine'
import { businessNameOf } from './_prompts'

const NAME = 'openai'
const TIMEOUT_MS = 30_000
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

async function complete(req: ChatRequest): Promise<ChatResponse> {
  const s = settings()
  const model = req.largeModel ? s.largeModel : s.model
  const body = {
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
  }
  let res: Completion
  try {
    res = await ofetch<Completion>(`${s.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      body,
      timeout: TIMEOUT_MS,
      retry: 1,
      retryDelay: 500,
      retryStatusCodes: [429, 500, 502, 503, 504],
    })
  } catch (e) {
    // The error names the status and endpoint, never the key.
    const status = e instanceof FetchError ? (e.statusCode ?? 'no response') : 'no response'
    throw new Error(
      `[chat] [${NAME}] ${s.baseUrl}/chat/completions failed (${status}): ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    )
  }
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
  async summarize(sources, opts) {
    const maxChars = opts?.maxChars ?? 4000
    const text = sources
      .map((s) => `# ${s.title}\n${s.text}`)
      .join('\n\n')
      .slice(0, 120_000)
    const out = await ask(
      `You condense website pages into a knowledge summary for a customer-service agent. Keep every concrete fact (prices, phone numbers, e-mail addresses, opening hours, addresses, policies, products and services). Write plain sentences, no marketing language, no invented facts, at most ${maxChars} characters.`,
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
