// Widget chat (issue 17): a visitor's conversation is an ordinary chat conversation (conv_p<n>, the chat
// prompt and tools, the chat_messages quota and billing) on channel `widget`, created and answered by the
// API chat's own functions. The visitor proves it is theirs with the token handed out at creation, of
// which only the SHA-256 is stored.
import { timingSafeEqual } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import { presentAppearance, type AgentRow } from '~/domain/agents/agents'
import { createConversation, resolveGreeting } from '~/domain/conversations/create'
import { postMessage } from '~/domain/conversations/messages'
import type { Runtime } from '~/kit/runtime'
import { apiError, Errors } from '~/lib/errors'
import { mintToken, sha256Hex } from '~/lib/opaque-token'
import { refundWidgetConversation, takeWidgetConversation } from './quotas'
import type { WidgetConversationBody, WidgetMessageBody } from './schemas'

export const VISITOR_TOKEN_PREFIX = 'svc_vt_'

export const invalidVisitorToken = () =>
  apiError('invalid_visitor_token', 'Send the visitor_token of this conversation in X-Svc-Visitor-Token.')

/**
 * What the widget script needs before it shows anything (GET /widget/config): the appearance as
 * GET /agents/{agt}/widget presents it and the greeting a new conversation would store as turn 0.
 */
export function widgetConfig(agent: AgentRow) {
  return {
    appearance: presentAppearance(agent.appearance),
    greeting: resolveGreeting(agent, {}, { surface: 'chat', widget: true }),
  }
}

/**
 * 201 {conversation_id, visitor_token, greeting, appearance}: the greeting is stored as turn 0, as with
 * send_greeting; the appearance lets the script repaint with the agent's current settings. Each takes one of
 * the agent's widget_conversations_per_day (429 quota_exceeded past it), given back when the create fails.
 */
export async function startWidgetConversation(runtime: Runtime, agent: AgentRow, body: WidgetConversationBody = {}) {
  const visitorToken = mintToken(VISITOR_TOKEN_PREFIX)
  const taken = await takeWidgetConversation(runtime, agent)
  const conv = await createConversation(
    runtime,
    agent.accountId,
    { agent_id: agent.id, send_greeting: true, utm: body.utm },
    { channel: 'widget', visitorTokenHash: sha256Hex(visitorToken), language: body.language ?? null },
  ).catch(async (err) => {
    await refundWidgetConversation(runtime, agent, taken.day)
    throw err
  })
  return {
    conversation_id: conv.conversation_id,
    visitor_token: visitorToken,
    // The text stored as turn 0.
    greeting: (conv.transcript as { text: string }[] | undefined)?.[0]?.text ?? resolveGreeting(agent, {}),
    appearance: presentAppearance(agent.appearance),
  }
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/**
 * One turn for the visitor: the conversation must be a widget conversation of this agent (else 404, so
 * another agent's id reveals nothing) and the visitor token its own (else 403 invalid_visitor_token).
 * The turn is postMessage's: claim, quota, billing, engine, tools, one write.
 */
export async function postWidgetMessage(
  runtime: Runtime,
  agent: AgentRow,
  convId: string,
  visitorToken: string | undefined,
  body: WidgetMessageBody,
) {
  const [conv] = await runtime.database.db
    .select({
      agentId: conversations.agentId,
      channel: conversations.channel,
      hash: conversations.visitorTokenHash,
      deletedAt: conversations.deletedAt,
    })
    .from(conversations)
    .where(and(eq(conversations.id, convId), eq(conversations.accountId, agent.accountId)))
  if (!conv || conv.agentId !== agent.id || conv.channel !== 'widget' || conv.deletedAt || !conv.hash)
    throw Errors.notFound('Conversation')
  if (!visitorToken || !sameHash(sha256Hex(visitorToken), conv.hash)) throw invalidVisitorToken()
  const { response } = await postMessage(runtime, agent.accountId, convId, { text: body.text })
  const { turn, turns } = response as { turn: unknown; turns: unknown }
  return { turn, turns }
}
