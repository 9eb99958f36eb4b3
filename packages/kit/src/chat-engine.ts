// A chat engine turns a prompt plus a transcript into the agent's next turn, and writes the build
// outputs (summary, greeting, instructions). One file per engine under providers/chat/.
import type { CapabilityIntent } from './intents.ts'
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  name?: string
}

export interface ToolSpec {
  name: string
  description: string
  parameters: Record<string, unknown>
  /** The capability's intents: what an engine without a model matches the visitor's message against. */
  intents?: CapabilityIntent[]
}

export interface ChatRequest {
  /** The prompt, including the knowledge the engine may answer from. */
  system: string
  messages: ChatMessage[]
  tools?: ToolSpec[]
  temperature?: number
  maxTokens?: number
  largeModel?: boolean
  /** Aborts the request (a caller who hangs up or interrupts); the engine rejects or ends its stream. */
  signal?: AbortSignal
}

export interface ToolCall {
  name: string
  arguments: Record<string, unknown>
}

export interface ChatResponse {
  text: string
  toolCalls: ToolCall[]
  /** True when the engine could not answer from what it was given. */
  unanswered: boolean
  usage: { input: number; output: number }
  model: string
}

/**
 * One piece of a streamed answer: text as it is written (in order; concatenated it is the answer's text),
 * each tool call once its arguments are complete, then exactly one `done`.
 */
export type ChatDelta =
  /** The engine knows before writing that it cannot answer from what it was given (optional; done says it too). */
  | { type: 'unanswered' }
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; unanswered: boolean; usage: { input: number; output: number }; model: string }

export type Surface = 'phone' | 'chat' | 'voice_chat'

/** What the build knows when it writes the greeting and the prompts. */
export interface BuildInput {
  businessName: string | null
  websiteUrl: string
  /** The knowledge summary written by summarize(). */
  summary: string
  /** BCP 47 tag, e.g. en or fr-FR. */
  language: string
  agentType: string
  role?: string | null
  refinementRules?: string[]
}

/** One field an agent's `analysis` setting declares (decisions "Conversation analysis"). */
export interface AnalysisField {
  name: string
  type: 'string' | 'number' | 'boolean' | 'enum' | 'date'
  description: string
  enum?: string[]
  required?: boolean
}

/** What extract() reads: the fields, the success criteria and the stored turns, by their turn_index. */
export interface ExtractRequest {
  fields: AnalysisField[]
  successCriteria: string | null
  turns: { index: number; speaker: 'visitor' | 'agent'; text: string }[]
  signal?: AbortSignal
}

/**
 * One extracted value with the words it came from. `quote` is verbatim transcript text; `turnIndex` and
 * `start` say where, when the engine knows (the host checks them and otherwise searches the quote itself).
 * A value the engine cannot quote is null: the host refuses any value it cannot find in the transcript.
 */
export interface ExtractedValue {
  value: string | number | boolean | null
  quote: string | null
  turnIndex?: number
  start?: number
}

export interface ExtractResult {
  values: Record<string, ExtractedValue>
  /** Whether the conversation met the success criteria; null when there are none or the engine cannot tell. */
  success: boolean | null
  usage: { input: number; output: number }
  model: string
}

export interface ChatEngine {
  name: string
  models: readonly string[]
  complete(req: ChatRequest): Promise<ChatResponse>
  /**
   * The same answer as it is generated (optional). Voice calls speak the first sentence while the rest is
   * still being written; an engine without it is streamed from complete() by streamAnswer(). Honours
   * req.signal: an aborted stream stops reading and throws the signal's reason.
   */
  stream?(req: ChatRequest): AsyncIterable<ChatDelta>
  /**
   * Condense source texts into one summary of at most maxChars (default 4000), written in `language` (BCP-47)
   * when given; an engine that cannot write in it answers '' and the host writes a plain one itself.
   */
  summarize(
    sources: { title: string; text: string }[],
    opts?: { maxChars?: number; language?: string | null },
  ): Promise<string>
  /** The agent's opening line. */
  writeGreeting(input: BuildInput): Promise<string>
  /** The prompt for one surface: phone `instructions`, `chat_instructions` or `voice_chat_instructions`. */
  writeInstructions(input: BuildInput & { surface: Surface }): Promise<string>
  /**
   * The values of an agent's analysis fields in one ended conversation, each with a verbatim quote (optional;
   * without it the host extracts deterministically, as the local engine does). The host locates every
   * quote in the stored turns and keeps only the values it finds there.
   */
  extract?(req: ExtractRequest): Promise<ExtractResult>
}

export const defineChatEngine = (e: ChatEngine): ChatEngine => e

/** Rough token count shared by engines that cannot measure it. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4)

/** Heading under which the host appends the knowledge to the system prompt; engines that retrieve read below it. */
export const KNOWLEDGE_HEADING = '## Knowledge'

/** The system prompt of a turn: the surface prompt, then the knowledge under KNOWLEDGE_HEADING. */
export const withKnowledge = (prompt: string, knowledge: string) =>
  `${prompt.trimEnd()}\n\n${KNOWLEDGE_HEADING}\n${knowledge.trim()}\n`
