// A chat engine turns a prompt plus a transcript into the agent's next turn, and writes the build
// outputs (summary, greeting, instructions). One file per engine under providers/chat/.
export interface ChatMessage { role: 'system' | 'user' | 'assistant' | 'tool'; content: string; name?: string }

export interface ToolSpec { name: string; description: string; parameters: Record<string, unknown> }

export interface ChatRequest {
  system: string
  messages: ChatMessage[]
  tools?: ToolSpec[]
  temperature?: number
  maxTokens?: number
  largeModel?: boolean
}

export interface ChatResponse {
  text: string
  toolCalls: { name: string; arguments: Record<string, unknown> }[]
  /** True when the engine could not answer from what it was given. */
  unanswered: boolean
  usage: { input: number; output: number }
  model: string
}

export interface ChatEngine {
  name: string
  models: readonly string[]
  complete(req: ChatRequest): Promise<ChatResponse>
  /** Condense source texts into one knowledge summary. */
  summarize(sources: { title: string; text: string }[], opts?: { maxChars?: number }): Promise<string>
}

export const defineChatEngine = (e: ChatEngine): ChatEngine => e
