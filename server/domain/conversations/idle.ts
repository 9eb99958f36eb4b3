// The idle sweep (decisions "Idle conversations"): an in_progress conversation on channel api or widget
// with no new turn for conversation_idle_seconds becomes abandoned, with ended_at its last turn's time,
// conversation.ended and a summary, like POST …/end (recordEnd, queueSummary). The outcome is the summary
// job's to write. Voice channels are left alone: they end with their call.
//
// Activity is updated_at, which every turn write moves (and an identify, which counts as the client still
// being there); the partial index conversations_idle_idx (migration 0019) holds exactly the open api and
// widget rows by it, so finding the candidates reads the oldest few index entries and nothing else.
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { conversations, turns } from '~/db/schema'
import type { JobContext } from '~/kit/job'
import { queueSummary, recordEnd } from './end'
import type { ConversationRow } from './present'

export const IDLE_CHANNELS = ['api', 'widget'] as const
/** Conversations closed per sweep at most; a backlog drains over the following sweeps, oldest first. */
export const IDLE_SWEEP_BATCH = 500

const c = conversations

// The index's own predicate, as literals: with parameters a generic plan could not prove that the partial
// index covers the query (the same reason as the list's literal flags).
const OPEN_TEXT = sql.raw(
  `"conversations"."status" = 'in_progress' AND "conversations"."channel" IN (${IDLE_CHANNELS.map((x) => `'${x}'`).join(', ')})`,
)

/** Open text conversations quiet since before `now() - idleSeconds` (the database's clock). */
const idleSince = (idleSeconds: number) =>
  and(OPEN_TEXT, lt(c.updatedAt, sql`now() - make_interval(secs => ${idleSeconds}::double precision)`))

async function idleCandidates(ex: Executor, idleSeconds: number, limit: number): Promise<string[]> {
  const rows = await ex
    .select({ id: c.id })
    .from(c)
    .where(idleSince(idleSeconds))
    .orderBy(asc(c.updatedAt))
    .limit(limit)
  return rows.map((r) => r.id)
}

/** The time of the conversation's last turn (its start when it has none): the primary key's last entry. */
const lastTurnAt = sql`coalesce((SELECT t."timestamp" FROM ${turns} t WHERE t.conversation_id = ${c.id}
  ORDER BY t.turn_index DESC LIMIT 1), ${c.startedAt})`

/**
 * The claim: one guarded UPDATE that abandons the row only while it is still open, still idle and held by
 * no turn. A hold whose instance died is given back with its quota unit by the hold sweep (holds.ts), which
 * the job runs just before. Whoever loses the race (another instance's sweep, a turn, POST …/end) changes
 * nothing here, so a conversation is never closed twice.
 */
async function abandon(tx: Executor, id: string, idleSeconds: number): Promise<ConversationRow | null> {
  const [row] = await tx
    .update(c)
    .set({ status: 'abandoned', endedAt: lastTurnAt, updatedAt: sql`now()`, turnLockedUntil: null })
    .where(and(eq(c.id, id), idleSince(idleSeconds), isNull(c.turnLockedUntil)))
    .returning()
  return row ?? null
}

export interface SweepResult {
  closed: number
  /** Conversations whose close failed (rolled back; the next sweep tries them again), with the reason. */
  failed: { id: string; error: string }[]
}

/**
 * One sweep: abandons up to IDLE_SWEEP_BATCH idle conversations, each in its own transaction with its
 * usage row and conversation.ended, then queues their summaries. A failing conversation is rolled back
 * alone and reported; the others are still closed.
 */
export async function abandonIdleConversations(
  database: Database,
  send: JobContext['send'],
  idleSeconds: number,
): Promise<SweepResult> {
  const result: SweepResult = { closed: 0, failed: [] }
  for (const id of await idleCandidates(database.db, idleSeconds, IDLE_SWEEP_BATCH)) {
    try {
      const row = await database.tx(async (tx) => {
        const ended = await abandon(tx, id, idleSeconds)
        if (ended) await recordEnd(tx, ended)
        return ended
      })
      if (!row) continue
      result.closed++
      // A soft-deleted row is closed only to leave the index; it is read by no one, so it gets no summary.
      if (!row.deletedAt) await queueSummary(send, row)
    } catch (err) {
      result.failed.push({ id, error: err instanceof Error ? err.message : String(err) })
    }
  }
  return result
}
