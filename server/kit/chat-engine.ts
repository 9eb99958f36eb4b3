// A chat engine turns a prompt plus a transcript into the agent's next turn, and writes the build
// outputs (summary, greeting, instructions). One file per engine under providers/chat/.
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  name?: string
}

export interface ToolSpec {
  name: string
  description: string
  parameters: Record<string, unknown>
}

export interface ChatRequest {
  /** The prompt, including the knowledge the engine may answer from. */
  system: string
  messages: ChatMessage[]
  tools?: ToolSpec[]
  temperature?: number
  maxTokens?: number
  largeModel?: boolean
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

export interface ChatEngine {
  name: string
  models: readonly string[]
  complete(req: ChatRequest): Promise<ChatResponse>
  /** Condense source texts into one knowledge summary of at most maxChars (default 4000). */
  summarize(sources: { title: string; text: string }[], opts?: { maxChars?: number }): Promise<string>
  /** The agent's opening line. */
  writeGreeting(input: BuildInput): Promise<string>
  /** The prompt for one surface: phone `instructions`, `chat_instructions` or `voice_chat_instructions`. */
  writeInstructions(input: BuildInput & { surface: Surface }): Promise<string>
}

export const defineChatEngine = (e: ChatEngine): ChatEngine => e

/** Rough token count shared by engines that cannot measure it. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4)

/** Heading under which the host appends the knowledge to the system prompt; engines that retrieve read below it. */
export const KNOWLEDGE_HEADING = '## Knowledge'

/** The system prompt of a turn: the surface prompt, then the knowledge under KNOWLEDGE_HEADING. */
export const withKnowledge = (prompt: string, knowledge: string) =>
  `${prompt.trimEnd()}\n\n${KNOWLEDGE_HEADING}\n${knowledge.trim()}\n`
