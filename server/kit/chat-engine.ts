// A chat engine turns a prompt plus a transcript into the agent's next turn, and writes the build
// outputs (summary, greeting, instructions). One file per engine under providers/chat/. The contract is the
// public kit's (@svc/plugin-kit); the host adds streamAnswer.
import type { ChatDelta, ChatEngine, ChatRequest } from '@svc/plugin-kit'

export {
  type ChatMessage,
  type ToolSpec,
  type ChatRequest,
  type ToolCall,
  type ChatResponse,
  type ChatDelta,
  type Surface,
  type BuildInput,
  type AnalysisField,
  type ExtractRequest,
  type ExtractedValue,
  type ExtractResult,
  type ChatEngine,
  defineChatEngine,
  estimateTokens,
  KNOWLEDGE_HEADING,
  withKnowledge,
} from '@svc/plugin-kit'

/**
 * The engine's answer as deltas: its own stream when it has one, else complete() as one delta. A tool
 * call's own text is not part of the answer (the answer after the tool is), as in completeWithTools.
 */
export async function* streamAnswer(engine: ChatEngine, req: ChatRequest): AsyncGenerator<ChatDelta> {
  if (engine.stream) {
    yield* engine.stream(req)
    return
  }
  const r = await engine.complete(req)
  req.signal?.throwIfAborted()
  if (r.toolCalls.length) for (const call of r.toolCalls) yield { type: 'tool_call', call }
  else {
    if (r.unanswered) yield { type: 'unanswered' }
    if (r.text) yield { type: 'text', text: r.text }
  }
  yield { type: 'done', unanswered: r.unanswered, usage: r.usage, model: r.model }
}
