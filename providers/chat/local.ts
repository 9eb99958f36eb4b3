// The default engine: deterministic and offline. It answers by lexical retrieval over the knowledge in the
// system prompt (then from a fact its instructions state, decisions "Test gate"), calls a tool when one of its
// intents matches (./_intents.ts) and writes build outputs from templates and an extractive summary.
import {
  defineChatEngine,
  estimateTokens,
  KNOWLEDGE_HEADING,
  type ChatDelta,
  type ChatRequest,
  type ChatResponse,
  type ToolCall,
  type ToolSpec,
} from '~/kit/chat-engine'
import { bm25, EMAIL, indexBuilder, sentenceChunks, sentences, tokens, type LexicalIndex } from './_text'
import { intentCall, NAME_OF } from './_intents'
import { phoneIn } from '~/lib/phone'
import { summarizeText } from './_summary'
import { detectLanguage, smallTalkAnswer, smallTalkOf, statedContact, wantsPerson } from '~/lib/cues'
import { greeting, instructions } from './_prompts'
import { extractDeterministic } from '~/domain/analysis/deterministic'

const NAME = 'local'
const MODEL = 'local-retrieval-1'

const FALLBACK =
  "I'm sorry, I don't have that information. If you leave your e-mail address or phone number, someone will get back to you."
const CALLBACK =
  /\b(call|ring|phone|text|e-?mail|contact|reach|get back to)\s+(me|us)\b|\bcall\s*back\b|\bcallback\b|\bget in touch\b/i

async function complete(req: ChatRequest): Promise<ChatResponse> {
  const last = [...req.messages].reverse().find((m) => m.role === 'user' || m.role === 'tool')
  const input = estimateTokens(req.system + req.messages.map((m) => m.content).join(''))
  const answer = (text: string, unanswered = false, toolCalls: ToolCall[] = []): ChatResponse => ({
    text,
    toolCalls,
    unanswered,
    usage: { input, output: estimateTokens(text) },
    model: MODEL,
  })
  if (!last) return answer('Hello! How can I help you?')
  // After a tool ran, its result is what the visitor needs to hear.
  if (last.role === 'tool') return answer(last.content)
  // The tool rule (decisions "Plugin packages"): a tool's intents; a tool that declares none keeps the older
  // rules, by name (a lead-like tool, transfer_call).
  const tools = req.tools ?? []
  const plain = tools.filter((t) => !t.intents?.length)
  const call = intentCall(tools, last.content) ?? leadCall(plain, last.content) ?? transferCall(plain, last.content)
  if (call)
    return answer('Thank you, I have passed on your details and someone will get back to you shortly.', false, [call])
  // What the host also understands (lib/cues): a person asked for, small talk, contact details given.
  if (wantsPerson(last.content)) return answer(PERSON)
  const small = smallTalkOf(last.content)
  if (small) return answer(smallTalkAnswer(small, null))
  const query = tokens(last.content)
  if (!query.length) return answer('Hello! How can I help you?')
  const { told, knowledge } = partsOf(req.system)
  const best = await retrieve(knowledge, query)
  if (best.length) return answer(best.join(' '))
  // Knowledge first; then a fact the instructions state, so a prompt change changes an answer offline.
  const fact = instructionFact(told, query)
  if (fact) return answer(fact)
  const contact = statedContact(last.content, null)
  if ((contact.email || contact.phone_e164) && !last.content.includes('?')) return answer(NOTED)
  return answer(FALLBACK, true)
}

const PERSON = "I'll pass you to a member of our team."
const NOTED = 'Thank you, I have noted your contact details; someone will get back to you.'

// A sentence ends at . ! or ? (closing quotes or brackets allowed) followed by whitespace; "16.50" does not.
const SENTENCE_END = /(?<=[.!?]["')\]]?\s+)/

/**
 * complete()'s answer one sentence at a time, as a model writes it, so a voice call can speak the first
 * sentence while the rest follows. Each sentence keeps the space after it: the deltas join to the text.
 */
async function* stream(req: ChatRequest): AsyncGenerator<ChatDelta> {
  req.signal?.throwIfAborted()
  const r = await complete(req)
  // A tool call's text is a placeholder the host drops (completeWithTools answers after the tool ran).
  if (r.toolCalls.length)
    for (const call of r.toolCalls) {
      req.signal?.throwIfAborted()
      yield { type: 'tool_call', call }
    }
  else {
    if (r.unanswered) yield { type: 'unanswered' }
    for (const text of r.text.split(SENTENCE_END)) {
      req.signal?.throwIfAborted()
      if (text) yield { type: 'text', text }
    }
  }
  req.signal?.throwIfAborted()
  yield { type: 'done', unanswered: r.unanswered, usage: r.usage, model: r.model }
}

export default defineChatEngine({
  name: NAME,
  models: [MODEL],
  complete,
  stream,
  async summarize(sources, opts) {
    // Extractive: it can only repeat the sources' own words, so it cannot write in another language.
    const wanted = opts?.language?.split('-')[0].toLowerCase()
    if (wanted && wanted !== (detectLanguage(sources.map((x) => x.text).join(' '), null) ?? wanted)) return ''
    return summarizeText(sources, opts?.maxChars ?? 4000)
  },
  async writeGreeting(input) {
    return greeting(input)
  },
  async writeInstructions(input) {
    return instructions(input)
  },
  // Deterministic, from visitor turns (decisions "Conversation analysis").
  async extract(req) {
    return extractDeterministic(req)
  },
})

/** The system prompt split at the knowledge heading: what the instructions tell (before it) and the
 *  knowledge (after it); without the heading all of it is knowledge, as before. */
function partsOf(system: string): { told: string; knowledge: string } {
  const at = system.indexOf(KNOWLEDGE_HEADING)
  return at >= 0
    ? { told: system.slice(0, at), knowledge: system.slice(at + KNOWLEDGE_HEADING.length) }
    : { told: '', knowledge: system }
}

// A statement of the business about itself ("We open at 9 am on weekdays.", "Our shop is in Leeds."), as
// opposed to a direction to the model ("You are a helpful assistant.", "Always answer briefly.", "If we are
// closed, say so."): only the former can answer a visitor.
const FIRST_PERSON_PLURAL = /\b(?:we|our|ours|us|we're|we've|we'll)\b/i
const DIRECTION =
  /^(?:you|your|always|never|do|don't|please|answer|use|say|tell|offer|ask|be|keep|reply|respond|refer|make|if|when|whenever|unless|only|avoid|try|remember|note|mention|greet|introduce|speak|spell|escalate|transfer)\b/i

/**
 * The one instruction sentence that answers the question, or null. Stricter than the knowledge: the
 * sentence must state a fact of the business (first person plural, not a direction to the model, not a
 * question, not a heading) and hold every content word of a question of one or two of them (at least two
 * and half of them for longer ones); the first best sentence wins.
 */
export function instructionFact(told: string, query: string[]): string | null {
  if (!told.trim()) return null
  const wanted = [...new Set(query)]
  const needed = wanted.length <= 2 ? wanted.length : Math.max(2, Math.ceil(wanted.length / 2))
  let best: { text: string; matched: number } | null = null
  // The instructions are a prompt (at most 200,000 characters); only its first 20,000 are read here.
  for (const raw of sentences(told.slice(0, 20_000))) {
    const text = raw.replace(/^[-*]\s+/, '').trim()
    if (!text || text.startsWith('#') || text.endsWith(':') || text.endsWith('?') || text.length > PASSAGE_MAX) continue
    if (!FIRST_PERSON_PLURAL.test(text) || DIRECTION.test(text)) continue
    const own = new Set(tokens(text))
    const matched = wanted.filter((w) => own.has(w)).length
    if (matched >= needed && matched > (best?.matched ?? 0)) best = { text, matched }
  }
  return best?.text ?? null
}

// Every turn of a conversation sends the same knowledge: indexing it once keeps a turn over a large
// knowledge base from re-tokenising it (a few recent knowledge bases; each can hold a million characters, so few).
// Concurrent turns over the same knowledge share one indexing.
const indexes = new Map<string, Promise<{ passages: string[]; index: LexicalIndex }>>()

// Indexing two million characters takes seconds of CPU: it runs piece by piece, giving the event loop back
// between pieces, so other requests (and /health) keep being answered (decisions "Hostile input").
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

async function build(knowledge: string) {
  const passages: string[] = []
  const index = indexBuilder()
  for (const piece of sentenceChunks(knowledge)) {
    for (const s of sentences(piece)) {
      if (s.startsWith('#')) continue
      for (const passage of passagesOf(s.replace(/^[-*]\s+/, ''))) {
        passages.push(passage)
        index.add(tokens(passage))
      }
    }
    await yieldToLoop()
  }
  return { passages, index: index.done() }
}

// A passage is an answer: a "sentence" of a million characters (a page without full stops) is cut into
// passages of at most this many characters, which also bounds the work of scoring each one.
export const PASSAGE_MAX = 2000

function* passagesOf(sentence: string): Generator<string> {
  for (let at = 0; at < sentence.length; ) {
    let end = Math.min(sentence.length, at + PASSAGE_MAX)
    if (end < sentence.length) {
      const space = sentence.lastIndexOf(' ', end)
      if (space > at) end = space
    }
    const passage = sentence.slice(at, end).trim()
    if (passage) yield passage
    at = end
  }
}

function indexed(knowledge: string) {
  let hit = indexes.get(knowledge)
  if (hit) indexes.delete(knowledge)
  else {
    hit = build(knowledge)
    hit.catch(() => indexes.delete(knowledge))
  }
  indexes.set(knowledge, hit)
  if (indexes.size > 8) indexes.delete(indexes.keys().next().value!)
  return hit
}

/** The best one or two passages, or none when the overlap is too thin to be an answer. */
async function retrieve(knowledge: string, query: string[]): Promise<string[]> {
  const { passages, index } = await indexed(knowledge)
  const scored = bm25(index, query).map((s, i) => ({ ...s, text: passages[i] }))
  const distinct = new Set(query).size
  // Meaningful: at least two query terms, or a third of them for short questions.
  const good = scored.filter((s) => s.matched.length >= Math.min(2, Math.ceil(distinct / 3)) && s.score > 0)
  good.sort((a, b) => b.score - a.score)
  if (!good.length) return []
  const out = [good[0].text]
  if (good[1] && good[1].score >= good[0].score * 0.6 && good[1].text !== good[0].text) out.push(good[1].text)
  return out
}

// "transfer me to Sales", "put me through to billing", "can I speak to someone in sales": the destination is
// the words after "to"/"in", up to the end of the clause (bounded: the text is one visitor turn, and the
// pattern has no nested quantifiers).
const TRANSFER =
  /\b(?:transfer|put|connect|forward)\s+(?:me|us|this call)\s+(?:through\s+)?to\s+(?:the\s+|a\s+|your\s+)?([\p{L}][\p{L} '-]{0,60})/iu
const SPEAK_TO =
  /\b(?:speak|talk)\s+(?:to|with)\s+(?:someone\s+(?:in|from)\s+|the\s+|your\s+)?([\p{L}][\p{L} '-]{0,60})/iu

/** A phone call's request to be transferred, when the agent has transfer_call. */
function transferCall(tools: ToolSpec[], text: string): ToolCall | null {
  if (!tools.some((t) => t.name === 'transfer_call')) return null
  const m = TRANSFER.exec(text.slice(0, 2000)) ?? SPEAK_TO.exec(text.slice(0, 2000))
  const destination = m?.[1]
    .replace(/\b(please|now|department|team)\b/gi, '')
    .replace(/\s+/g, ' ')
    .trim()
  if (!destination || /^(?:you|me|him|her|them|it)\b/i.test(destination)) return null
  return { name: 'transfer_call', arguments: { destination } }
}

/** A lead tool call when the visitor leaves an e-mail or phone number and asks to be contacted. */
function leadCall(tools: ToolSpec[], text: string): ToolCall | null {
  const tool = tools.find((t) => /lead|callback|call_back|contact/i.test(t.name))
  if (!tool || !CALLBACK.test(text)) return null
  const email = text.match(EMAIL)?.[0]
  const phone = phoneIn(text) ?? undefined
  if (!email && !phone) return null
  const args: Record<string, unknown> = { name: text.match(NAME_OF)?.[1], email, phone, message: text }
  const declared = (tool.parameters as { properties?: Record<string, unknown> }).properties
  for (const k of Object.keys(args)) if (args[k] === undefined || (declared && !(k in declared))) delete args[k]
  return { name: tool.name, arguments: args }
}
