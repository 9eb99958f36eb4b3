// Turn holds left by a dead instance (decisions "Turn holds"). A chat turn's claim takes the day's
// chat_messages unit with its hold (messages.ts); a turn that fails gives both back, and the next claim of
// a conversation whose hold lapsed inherits the unit. When no claim comes (the client gave up after the
// instance died), the unit would stay taken for a turn that was never written: this sweep gives such holds
// back with their units, so the day's counter equals the turns written. Calls' claims take no unit, so
// only the text channels are swept (the partial index conversations_held_idx holds exactly those rows).
import { sql } from 'drizzle-orm'
import { rowsOf, type Database } from '~/db/client'
import { TURN_LOCK_MS } from './messages'

/** Holds given back per sweep at most; a backlog drains over the following sweeps, oldest first. */
export const HOLD_SWEEP_BATCH = 500

/**
 * Clears up to HOLD_SWEEP_BATCH lapsed holds of text conversations and gives their units back to the day
 * each claim took them (the hold's end minus its length), in one statement. FOR UPDATE SKIP LOCKED: a row a
 * claim is taking now is left to it (it inherits the unit); a row re-claimed since is no longer lapsed.
 * Answers the number of holds given back.
 */
export async function releaseLapsedHolds(database: Database, limit = HOLD_SWEEP_BATCH): Promise<number> {
  const rows = await database.db.execute(sql`
    WITH lapsed AS (
      SELECT id, account_id, turn_locked_until AS held FROM conversations
      WHERE turn_locked_until IS NOT NULL AND channel IN ('api', 'widget') AND turn_locked_until < now()
      ORDER BY turn_locked_until LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), cleared AS (
      UPDATE conversations c SET turn_locked_until = NULL FROM lapsed l WHERE c.id = l.id RETURNING c.id
    ), units AS (
      SELECT l.account_id,
        ((l.held - ${sql.raw(`interval '${TURN_LOCK_MS} milliseconds'`)}) AT TIME ZONE 'UTC')::date AS day,
        count(*)::int AS n
      FROM lapsed l JOIN cleared USING (id) GROUP BY 1, 2
    ), refunded AS (
      UPDATE quota_usage q SET used = greatest(q.used - u.n, 0) FROM units u
      WHERE q.account_id = u.account_id AND q.day = u.day AND q.kind = 'chat_messages'
    )
    SELECT (SELECT count(*) FROM cleared)::int AS released`)
  return Number(rowsOf<{ released: number }>(rows)[0]?.released ?? 0)
}
