// A conversation handed to a person (decisions "Escalation", "notification_emails"): the conversation is
// marked escalated once, conversation.escalated is emitted with it (in the same transaction, so once), and
// every address of the agent's notification_emails gets a mail naming the agent, the visitor, their last
// words and the conversation. The handoff turn itself is written by the turn (chat or voice) that decided it.
import { and, eq } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import { emailsOf } from '~/kit/capability'
import type { AgentRow } from '~/domain/agents/rows'
import { emitEvent } from '~/domain/events/emit'
import type { ConversationRow } from './chat-schemas'
import { conversationResource } from './read'

/** Mail text is bounded: a visitor's message is quoted up to this many characters. */
const QUOTE_MAX = 1_000

export const notificationEmails = (agent: Pick<AgentRow, 'settings'>) => emailsOf(agent.settings?.notification_emails)

export async function escalate(
  runtime: Pick<Runtime, 'database' | 'providers'>,
  conv: Pick<ConversationRow, 'id' | 'accountId' | 'identity'>,
  agent: Pick<AgentRow, 'id' | 'name' | 'settings'>,
  why: { reason: string; visitorText: string },
): Promise<boolean> {
  const { database } = runtime
  const first = await database.tx(async (tx) => {
    const [row] = await tx
      .update(conversations)
      .set({ escalated: true, updatedAt: new Date() })
      .where(and(eq(conversations.id, conv.id), eq(conversations.escalated, false)))
      .returning()
    if (!row) return false
    await emitEvent(tx, {
      accountId: row.accountId,
      type: 'conversation.escalated',
      data: await conversationResource(tx, row),
    })
    return true
  })
  const to = notificationEmails(agent)
  if (!first || !to.length) return first
  const who = ['name', 'email', 'phone_e164']
    .map((k) => conv.identity?.[k])
    .filter((x): x is string => typeof x === 'string' && !!x)
  await runtime.providers.mail
    .send(
      {
        to,
        subject: `${agent.name}: a visitor asked for a person`,
        text: [
          `Agent: ${agent.name} (${agent.id})`,
          `Visitor: ${who.join(', ') || 'not identified'}`,
          `Reason: ${why.reason}`,
          `Last message: ${why.visitorText.slice(0, QUOTE_MAX)}`,
          `Conversation: ${conv.id}`,
        ].join('\n'),
        tags: { conversation_id: conv.id, agent_id: agent.id, kind: 'escalation' },
      },
      { database, accountId: conv.accountId },
    )
    .catch((err) =>
      console.error(`[escalation] ${conv.id}: mail not sent: ${err instanceof Error ? err.message : err}`),
    )
  return true
}
