// Browser-side widget events (issue 17): counted per agent, UTC day and type in widget_event_counts with
// one upsert; the data is checked (an object, at most 2 KB of JSON) and not kept. GET /metrics reads
// the counts (domain/metrics).
import { and, eq, sql } from 'drizzle-orm'
import { conversations, widgetEventCounts } from '~/db/schema'
import type { Database } from '~/db/client'
import type { AgentRow } from '~/domain/agents/agents'
import { Errors } from '~/lib/errors'
import type { WidgetEventBody } from './schemas'

export async function recordWidgetEvent(database: Database, agent: AgentRow, body: WidgetEventBody, now = new Date()) {
  if (body.conversation_id) {
    // Events about a conversation must name one of this agent's widget conversations.
    const [conv] = await database.db
      .select({ id: conversations.id })
      .from(conversations)
      .where(
        and(
          eq(conversations.id, body.conversation_id),
          eq(conversations.accountId, agent.accountId),
          eq(conversations.agentId, agent.id),
          eq(conversations.channel, 'widget'),
        ),
      )
    if (!conv) throw Errors.notFound('Conversation')
  }
  await database.db
    .insert(widgetEventCounts)
    .values({
      accountId: agent.accountId,
      agentId: agent.id,
      day: now.toISOString().slice(0, 10),
      type: body.type,
      count: 1,
    })
    .onConflictDoUpdate({
      target: [widgetEventCounts.agentId, widgetEventCounts.day, widgetEventCounts.type],
      set: { count: sql`${widgetEventCounts.count} + 1` },
    })
}
