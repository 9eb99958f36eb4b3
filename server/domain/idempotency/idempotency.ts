// Idempotency-Key on every POST (decisions): keyed by credential, method, path and the account the request
// acts for, kept 24 hours with a hash of the body. A repeat with the same body gets the stored answer; another body is 409
// idempotency_key_reused; a repeat while the first still runs is 409 idempotency_key_in_use. 5xx answers
// are not stored, so the client may retry them, unless the request had already committed a write.
//
// A claim moves running → committed (in the transaction of the request's first write: `fence`) → done
// (the answer stored). Each claim is told apart by its created_at (milliseconds; a takeover re-inserts the
// row), so a request whose claim was taken over can neither commit (its fence throws) nor store or release
// the new owner's claim. A claim left committed without an answer (its process died, or a 5xx after the
// write) is `lost`: the request is never run again, and a repeat is 409 idempotency_answer_lost.
import { createHash } from 'node:crypto'
import { and, eq, inArray, lt, or } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { idempotencyKeys } from '~/db/schema'
import { apiError } from '~/lib/errors'

const TTL_MS = 24 * 3600_000
/** A claim still "running" after this long belongs to a process that died; the next request takes over. */
const STALE_RUNNING_MS = 5 * 60_000

export interface StoredAnswer {
  status: number
  /** Success: the handler result before the envelope; error: the ApiError parts. */
  kind: 'single' | 'list' | 'error' | 'empty'
  payload: unknown
  /** Set instead of payload when the answer carries a secret (see sealed.ts). */
  sealed?: string
}

export interface Claim {
  key: { credentialId: string; method: string; path: string; key: string }
}
/** A claim held by this request: its key, and the created_at that tells it from a later claim of that key. */
export interface HeldClaim {
  key: Claim['key']
  at: Date
}

/**
 * The key as stored: the client's key, then (after a space, which a key cannot contain) the account scope,
 * so that the master key acting for account A and then B with one key gets two answers. The scope is the
 * resolved account ids; when resolution itself failed, a hash of what the request named instead.
 */
export function scopedKey(
  key: string,
  accountIds: readonly string[] | null,
  named: { header?: string; query?: unknown },
): string {
  if (accountIds) return `${key} acc:${accountIds.length ? [...accountIds].sort().join(',') : '-'}`
  return `${key} raw:${createHash('sha256')
    .update(JSON.stringify([named.header ?? null, named.query ?? null]))
    .digest('hex')
    .slice(0, 32)}`
}

export const bodyHash = (raw: Buffer | undefined) =>
  createHash('sha256')
    .update(raw ?? Buffer.alloc(0))
    .digest('hex')

export function checkKey(key: string) {
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw apiError('validation_error', 'Idempotency-Key is 1 to 255 printable characters.', 'Idempotency-Key')
}

/** Claims the key for this request, or answers what an earlier request with it produced. */
export async function claim(
  database: Database,
  k: Claim['key'],
  hash: string,
): Promise<{ replay: StoredAnswer } | { claimed: HeldClaim }> {
  const where = keyIs(k)
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await database.db
      .insert(idempotencyKeys)
      .values({ ...k, bodyHash: hash, state: 'running' })
      .onConflictDoNothing()
      .returning({ at: idempotencyKeys.createdAt })
    if (inserted[0]) return { claimed: { key: k, at: inserted[0].at } }
    const now = Date.now()
    // An expired key, or a running claim whose process died, is free again. A running claim that is merely
    // slow loses it too, but cannot commit after that (its fence finds another claim).
    const freed = await database.db
      .delete(idempotencyKeys)
      .where(
        and(
          where,
          or(
            lt(idempotencyKeys.createdAt, new Date(now - TTL_MS)),
            and(eq(idempotencyKeys.state, 'running'), lt(idempotencyKeys.createdAt, new Date(now - STALE_RUNNING_MS))),
          ),
        ),
      )
      .returning({ key: idempotencyKeys.key })
    if (freed.length) continue
    const [row] = await database.db.select().from(idempotencyKeys).where(where)
    if (!row) continue
    if (row.bodyHash !== hash)
      throw apiError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request body.',
        'Idempotency-Key',
      )
    if (row.state === 'lost' || (row.state === 'committed' && row.createdAt.getTime() < now - STALE_RUNNING_MS))
      throw apiError(
        'idempotency_answer_lost',
        'The request with this Idempotency-Key was carried out, but its answer was lost (the server handling it stopped or failed after the change was saved). It is not run again: read the resource to see the result.',
        'Idempotency-Key',
      )
    if (row.state === 'running' || row.state === 'committed') throw inUse()
    return { replay: row.response as StoredAnswer }
  }
  throw inUse()
}

const inUse = () =>
  apiError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still running; retry shortly.',
    'Idempotency-Key',
  )

function keyIs(k: Claim['key']) {
  return and(
    eq(idempotencyKeys.credentialId, k.credentialId),
    eq(idempotencyKeys.method, k.method),
    eq(idempotencyKeys.path, k.path),
    eq(idempotencyKeys.key, k.key),
  )
}

const held = (c: HeldClaim) => and(keyIs(c.key), eq(idempotencyKeys.createdAt, c.at))

/**
 * The last statement of every transaction the claiming request commits (db/commit-fence.ts): the claim
 * becomes committed with the write, or, when it is no longer this request's (taken over), the transaction
 * fails with 409 idempotency_key_in_use and nothing of it is kept.
 */
export async function fence(tx: Executor, c: HeldClaim) {
  const [row] = await tx
    .update(idempotencyKeys)
    .set({ state: 'committed' })
    .where(and(held(c), inArray(idempotencyKeys.state, ['running', 'committed'])))
    .returning({ key: idempotencyKeys.key })
  if (!row) throw inUse()
}

export async function complete(database: Database, c: HeldClaim, answer: StoredAnswer) {
  await database.db
    .update(idempotencyKeys)
    .set({ state: 'done', statusCode: answer.status, response: answer })
    .where(and(held(c), inArray(idempotencyKeys.state, ['running', 'committed'])))
}

/** A 5xx (or a crash) is not stored: the key is released so that a retry runs again; but a request that
 *  committed a write before failing must not run twice, so its claim becomes lost instead. */
export async function release(database: Database, c: HeldClaim) {
  await database.db.delete(idempotencyKeys).where(and(held(c), eq(idempotencyKeys.state, 'running')))
  await database.db
    .update(idempotencyKeys)
    .set({ state: 'lost' })
    .where(and(held(c), eq(idempotencyKeys.state, 'committed')))
}
