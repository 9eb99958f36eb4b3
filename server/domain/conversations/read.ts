// Reading one conversation: detail (include, transcript_format, redact), its summary and its recording.
// Another account's conversation is 404 not_found; a soft-deleted one is 410 conversation_deleted.
import { and, asc, eq, inArray, isNull } from 'drizzle-orm'
import { SignJWT, jwtVerify } from 'jose'
import { createHash } from 'node:crypto'
import type { Database, Executor } from '~/db/client'
import { accounts, conversations, turns } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import type { Principal } from '~/domain/credentials/principal'
import { parseInclude } from './list'
import { presentDetail, presentSummary, redactReadable, type ConversationRow, type TurnRow } from './present'
import { DETAIL_INCLUDE_OPTIONS, DETAIL_INCLUDES, type DetailQuery } from './schemas'

export const conversationDeleted = () =>
  apiError('conversation_deleted', 'This conversation was deleted; see GET /conversations/deleted.')

const liveOf = (accountIds: readonly string[], id: string) =>
  and(
    eq(conversations.id, id),
    inArray(conversations.accountId, [...accountIds]),
    // The calls of an agent test run are no conversation of the API (decisions "Test runs").
    isNull(conversations.testRunId),
  )

/** The live conversation of one of `accountIds`; 404 for unknown or another account's, 410 when soft-deleted. */
export async function loadConversation(
  ex: Executor,
  accountIds: readonly string[],
  id: string,
  lock = false,
): Promise<ConversationRow> {
  const q = ex.select().from(conversations).where(liveOf(accountIds, id))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw Errors.notFound('Conversation')
  if (row.deletedAt) throw conversationDeleted()
  return row
}

/** loadConversation with its account's default_redaction, in one round trip (the detail's hot path). */
async function loadWithRedaction(ex: Executor, accountIds: readonly string[], id: string) {
  const [hit] = await ex
    .select({ row: conversations, redact: accounts.defaultRedaction })
    .from(conversations)
    .innerJoin(accounts, eq(accounts.id, conversations.accountId))
    .where(liveOf(accountIds, id))
  if (!hit) throw Errors.notFound('Conversation')
  if (hit.row.deletedAt) throw conversationDeleted()
  return hit
}

export async function getConversation(
  database: Database,
  principal: Principal,
  accountIds: readonly string[],
  id: string,
  q: DetailQuery,
) {
  if (principal.type !== 'master' && !principal.scopes.has('conversations:read')) {
    throw apiError('insufficient_scope', 'A key with only summaries:read reads GET /conversations/{conv}/summary.')
  }
  const include = parseInclude(q.include, DETAIL_INCLUDE_OPTIONS, DETAIL_INCLUDES)
  const ex = database.db
  const { row, redact: byDefault } = await loadWithRedaction(ex, accountIds, id)
  const redact = q.redact ?? byDefault
  const turnRows = include.has('transcript')
    ? await ex.select().from(turns).where(eq(turns.conversationId, row.id)).orderBy(asc(turns.turnIndex))
    : []
  return presentDetail(row, turnRows, { include, format: q.transcript_format, redact })
}

/**
 * The conversation as GET /conversations/{conv} shows it with no query (all four includes, turns, the
 * account's default redaction): the one representation of event data and of the chat routes' answers.
 * `turnRows` saves a query when the caller already holds the transcript.
 */
export async function conversationResource(ex: Executor, row: ConversationRow, turnRows?: TurnRow[]) {
  const [acc] = await ex.select({ d: accounts.defaultRedaction }).from(accounts).where(eq(accounts.id, row.accountId))
  const transcript =
    turnRows ?? (await ex.select().from(turns).where(eq(turns.conversationId, row.id)).orderBy(asc(turns.turnIndex)))
  return presentDetail(row, transcript, { include: new Set(DETAIL_INCLUDES), format: 'turns', redact: acc?.d ?? false })
}

/** GET /conversations/{conv}/summary: masked by the account's default_redaction (the route takes no redact). */
export async function getConversationSummary(database: Database, accountIds: readonly string[], id: string) {
  const { row, redact } = await loadWithRedaction(database.db, accountIds, id)
  const out = presentSummary(row)
  return redact ? redactReadable(out) : out
}

// Recording URLs: an HS256 JWT keyed from SVC_SECRET (its own derivation, so a cursor key never signs
// media), valid for RECORDING_URL_TTL_S.
export const RECORDING_URL_TTL_S = 900
const mediaKey = (secret: string) =>
  createHash('sha256')
    .update('svc-media-v1\0' + secret)
    .digest()

export async function getRecording(
  ex: Executor,
  accountIds: readonly string[],
  id: string,
  opts: { secret: string; publicUrl: string; now?: Date },
) {
  const row = await loadConversation(ex, accountIds, id)
  const rec = row.recording as { sid?: string; duration_s?: number } | null
  if (!row.hasRecording || !rec?.sid) throw Errors.notFound('Recording')
  const now = opts.now ?? new Date()
  const exp = Math.floor(now.getTime() / 1000) + RECORDING_URL_TTL_S
  const token = await new SignJWT({ sid: rec.sid, conv: row.id, acc: row.accountId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(exp)
    .sign(mediaKey(opts.secret))
  return {
    conversation_id: row.id,
    url: `${opts.publicUrl}/v1/media/recordings/${encodeURIComponent(rec.sid)}.mp3?token=${token}`,
    expires_at: new Date(exp * 1000).toISOString(),
    duration_s: rec.duration_s ?? null,
  }
}

/** Verifies a media token for `sid`; answers its claims, or null when invalid, expired or for another sid. */
export async function verifyRecordingToken(
  token: string,
  sid: string,
  secret: string,
): Promise<{ conv: string; acc: string } | null> {
  try {
    const { payload } = await jwtVerify(token, mediaKey(secret), { algorithms: ['HS256'] })
    if (payload.sid !== sid) return null
    return { conv: String(payload.conv), acc: String(payload.acc) }
  } catch {
    return null
  }
}
