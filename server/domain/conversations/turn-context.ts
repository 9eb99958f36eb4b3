// What a turn on one surface (chat, phone, voice_chat) needs from its agent: the row, the system prompt (instructions, refinement rules and
// the knowledge block) and the tools. Reading it costs three queries and assembling the knowledge block is
// the turn's largest CPU cost, so it is built once per agent revision and kept here. The revision moves on
// any change of the agent row or of its knowledge (triggers of migration 0010), and the turn's claim reads
// it in the same statement, so a stale context is never used and no turn reads the agent again.
import type { Database } from '~/db/client'
import type { Capability } from '~/kit/capability'
import { withKnowledge, type Surface, type ToolSpec } from '~/kit/chat-engine'
import type { SessionRuntime } from '~/kit/runtime'
import { agentLanguage, agentLanguages, loadAgent, type AgentRow } from '~/domain/agents/agents'
import { injectRules } from '~/domain/agents/refinement'
import { knowledgeFor } from '~/domain/kb/summary'

export interface TurnContext {
  revision: number
  agent: AgentRow
  system: string
  /** The knowledge block alone, for a turn that brings its own instructions (an outbound call's script). */
  knowledge: string
  tools: Capability[]
  toolSpecs: ToolSpec[]
}

const MAX_AGENTS = 500
/** The surface's prompt: phone `instructions`, `chat_instructions`, `voice_chat_instructions`. */
const PROMPTS: Record<Surface, (a: AgentRow) => string | null> = {
  chat: (a) => a.chatInstructions,
  phone: (a) => a.instructions,
  voice_chat: (a) => a.voiceChatInstructions,
}
const contexts = new WeakMap<Database, Map<string, TurnContext>>()

/**
 * What the agent's profile settings tell the engine on every turn: the business profile, the conversation
 * style, the speaking style (voice surfaces) and the languages it answers in. Empty when none is set.
 */
export function profileBlock(agent: AgentRow, surface: Surface): string {
  const lines: string[] = []
  if (agent.businessProfile?.trim()) lines.push(`About the business: ${agent.businessProfile.trim()}`)
  if (agent.conversationStyle?.trim()) lines.push(`Conversation style: ${agent.conversationStyle.trim()}.`)
  const voiceStyle = agent.settings?.voice_style
  if (surface !== 'chat' && typeof voiceStyle === 'string' && voiceStyle.trim())
    lines.push(`Speaking style: ${voiceStyle.trim()}.`)
  const languages = agentLanguages(agent)
  if (languages.length)
    lines.push(
      `Answer in the visitor's language when it is one of ${languages.join(', ')}; otherwise in ${agentLanguage(agent) ?? languages[0]}.`,
    )
  return lines.length ? `${PROFILE_HEADING}\n${lines.join('\n')}` : ''
}
const PROFILE_HEADING = '### Profile'

/** The system prompt of a turn on `surface` whose prompt is `prompt`: it and the profile block, with the
 *  refinement rules injected, then the knowledge (last, where retrieving engines read it). */
export function systemPrompt(agent: AgentRow, surface: Surface, prompt: string | null, knowledge: string): string {
  const body = [prompt ?? '', profileBlock(agent, surface)].filter((x) => x.trim()).join('\n\n')
  return withKnowledge(injectRules(body, agent.refinementRules), knowledge)
}

/** The agent's context at `revision` (the value the claim read), from the cache or built now. */
export async function turnContext(
  runtime: SessionRuntime,
  accountId: string,
  agentId: string,
  revision: number,
  build: { tools: (agent: AgentRow) => Capability[]; spec: (c: Capability) => ToolSpec },
  surface: Surface = 'chat',
): Promise<TurnContext> {
  let cache = contexts.get(runtime.database)
  if (!cache) {
    cache = new Map()
    contexts.set(runtime.database, cache)
  }
  const key = `${surface}:${agentId}`
  const hit = cache.get(key)
  if (hit && hit.revision === revision && hit.agent.accountId === accountId) {
    // Map order is the eviction order: a hit moves to the back.
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const agent = await loadAgent(runtime.database.db, accountId, agentId)
  const knowledge = await knowledgeFor(runtime.database.db, agent, surface)
  const system = systemPrompt(agent, surface, PROMPTS[surface](agent), knowledge)
  const tools = build.tools(agent)
  // Stored under the revision the claim read, never a later one: what was read is at least that new, and
  // a newer revision on the next turn simply rebuilds.
  const context: TurnContext = { revision, agent, system, knowledge, tools, toolSpecs: tools.map(build.spec) }
  cache.delete(key)
  if (cache.size >= MAX_AGENTS) {
    const oldest = cache.keys().next().value
    if (oldest !== undefined) cache.delete(oldest)
  }
  cache.set(key, context)
  return context
}
