// POST /conversations: an API chat (conv_p<n>, channel api, session api_<ULID>) with its stamps, the
// optional greeting as turn 0 and conversation.started, all in one transaction after the balance check.
import { eq, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type * as v from 'valibot'
import { conversations, turns } from '~/db/schema'
import { rowsOf } from '~/db/client'
import type { Runtime } from '~/kit/runtime'
import {
  activePromptLabel,
  agentLanguage,
  agentVersionOf,
  assertNotPaused,
  loadAgent,
  resolveModel,
  type AgentRow,
} from '~/domain/agents/agents'
import { emitEvent } from '~/domain/events/emit'
import { addUsage, checkBalance } from './billing'
import {
  type CreateConversationBody,
  hasIdentity,
  validateIdentity,
  type ConversationRow,
  type TurnRow,
} from './chat-schemas'
import { conversationResource } from './read'
import { afterHoursMessage, greetingFor, isOpen, type GreetingSurface } from './behaviour'

export const GENERIC_WELCOME = 'Hello! How can I help you today?'

const fill = (template: string, values: Record<string, string | null | undefined>) =>
  template.replace(/\{(\w+)\}/g, (whole, key: string) => (values[key] ? String(values[key]) : whole))

export interface GreetingContext {
  surface?: GreetingSurface
  /** The conversation's language (BCP-47), for greetings[surface][language]. */
  language?: string | null
  /** The widget puts public_chat_greeting first (contract). */
  widget?: boolean
  at?: Date
}

/**
 * The greeting of a new conversation (decisions "greetings", "business_hours"): outside business hours the
 * after_hours_message; else greetings[surface][language] (then its primary subtag, then the default
 * language); else the contract's order: the build's greeting_initial template, public_chat_greeting (first
 * on the widget), greeting, a generic welcome.
 */
export function resolveGreeting(
  agent: Pick<AgentRow, 'greetingInitial' | 'businessName' | 'name' | 'settings'>,
  identity: Record<string, unknown>,
  on: GreetingContext = {},
): string {
  const closed = !isOpen(agent, on.at) && afterHoursMessage(agent)
  if (closed) return closed
  const settings = agent.settings ?? {}
  const values = {
    business_name: agent.businessName ?? agent.name,
    name: agent.name,
    agent_name: agent.name,
    visitor_name: typeof identity.name === 'string' ? identity.name : null,
  }
  const byLanguage = greetingFor(agent, on.surface ?? 'chat', on.language ?? null)
  const order = on.widget
    ? [byLanguage, settings.public_chat_greeting, agent.greetingInitial, settings.greeting]
    : [byLanguage, agent.greetingInitial, settings.public_chat_greeting, settings.greeting]
  for (const candidate of order) {
    if (typeof candidate === 'string' && candidate.trim()) return fill(candidate.trim(), values)
  }
  return GENERIC_WELCOME
}

/** metrics of a new conversation: whether it started outside the agent's business hours. */
export const openingMetrics = (agent: Pick<AgentRow, 'settings'>, at?: Date) => ({ after_hours: !isOpen(agent, at) })

/** Where a chat conversation comes from: API chat (the default) or the public widget (issue 17). */
export interface ChatOrigin {
  channel: 'api' | 'widget'
  /** SHA-256 hex of the widget visitor token, stored so that only its holder may send messages. */
  visitorTokenHash?: string | null
  /** The browser's language (the widget sends navigator.language), else the agent's. */
  language?: string | null
}

export async function createConversation(
  runtime: Runtime,
  accountId: string,
  body: v.InferOutput<typeof CreateConversationBody>,
  from: ChatOrigin = { channel: 'api' },
) {
  const { database } = runtime
  // Validate before anything is written or billed; the agent must be this account's.
  const identity = body.identity ? validateIdentity(body.identity) : {}
  for (const k of Object.keys(identity)) if (identity[k] === null) delete identity[k]
  // Billing first (contract States: a blocked subscription is 402 whatever the request names).
  await checkBalance(database.db, accountId)
  const result = await database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, body.agent_id)
    assertNotPaused(agent)
    const [{ n }] = rowsOf<{ n: string }>(await tx.execute(sql`SELECT nextval('conversation_seq')::text AS n`))
    const now = new Date()
    const [conv] = await tx
      .insert(conversations)
      .values({
        id: `conv_p${n}`,
        accountId,
        agentId: agent.id,
        agentType: agent.agentType,
        channel: from.channel,
        status: 'in_progress',
        sessionId: `${from.channel === 'widget' ? 'wgt' : 'api'}_${ulid()}`,
        externalSessionId: body.external_session_id ?? null,
        agentVersion: agentVersionOf(agent),
        promptVersion: await activePromptLabel(tx, agent, 'chat'),
        model: resolveModel(runtime, agent.useLargeModel),
        startedAt: now,
        updatedAt: now,
        identity,
        hasIdentity: hasIdentity(identity),
        custom: body.custom ?? {},
        metrics: openingMetrics(agent, now),
        utm: body.utm ?? {},
        language: from.language ?? agentLanguage(agent),
        visitorTokenHash: from.visitorTokenHash ?? null,
      })
      .returning()
    let transcript: TurnRow[] = []
    let row: ConversationRow = conv
    if (body.send_greeting) {
      transcript = await tx
        .insert(turns)
        .values({
          conversationId: conv.id,
          turnIndex: 0,
          speaker: 'agent',
          text: resolveGreeting(agent, identity, {
            surface: 'chat',
            language: conv.language,
            widget: from.channel === 'widget',
            at: now,
          }),
          timestamp: now,
          latencyMs: null,
          turnType: 'greeting',
          detectedLanguage: conv.language,
        })
        .returning()
      ;[row] = await tx.update(conversations).set({ turnCount: 1 }).where(eq(conversations.id, conv.id)).returning()
    }
    // The session is billed from its start (usage row with the tokens the turns add).
    await addUsage(tx, {
      accountId,
      agentId: agent.id,
      agentType: agent.agentType,
      channel: from.channel,
      sessionId: conv.sessionId,
      startedAt: now,
      tokens: 0,
    })
    const out = await conversationResource(tx, row, transcript)
    await emitEvent(tx, { accountId, type: 'conversation.started', data: out })
    return out
  })
  return result
}
