// Idempotency-Key on every POST (decisions): keyed by credential, method, path and the account the request
// acts for, kept 24 hours with a hash of the body. A repeat with the same body gets the stored answer; another body is 409
// idempotency_key_reused; a repeat while the first still runs is 409 idempotency_key_in_use. 5xx answers
// are not stored, so the client may retry them.
import { createHash } from 'node:crypto'
import { and, eq, lt, or } from 'drizzle-orm'
import type { Database } from '~/db/client'
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
): Promise<{ replay: StoredAnswer } | { claimed: true }> {
  const where = and(
    eq(idempotencyKeys.credentialId, k.credentialId),
    eq(idempotencyKeys.method, k.method),
    eq(idempotencyKeys.path, k.path),
    eq(idempotencyKeys.key, k.key),
  )
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await database.db
      .insert(idempotencyKeys)
      .values({ ...k, bodyHash: hash, state: 'running' })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key })
    if (inserted.length) return { claimed: true }
    const now = Date.now()
    // An expired key, or a running claim whose process died, is free again.
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
    if (row.state === 'running')
      throw apiError(
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still running; retry shortly.',
        'Idempotency-Key',
      )
    return { replay: row.response as StoredAnswer }
  }
  throw apiError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still running; retry shortly.',
    'Idempotency-Key',
  )
}

export async function complete(database: Database, k: Claim['key'], answer: StoredAnswer) {
  await database.db
    .update(idempotencyKeys)
    .set({ state: 'done', statusCode: answer.status, response: answer })
    .where(
      and(
        eq(idempotencyKeys.credentialId, k.credentialId),
        eq(idempotencyKeys.method, k.method),
        eq(idempotencyKeys.path, k.path),
        eq(idempotencyKeys.key, k.key),
      ),
    )
}

/** A 5xx (or a crash) is not stored: the key is released so that a retry runs again. */
export async function release(database: Database, k: Claim['key']) {
  await database.db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.credentialId, k.credentialId),
        eq(idempotencyKeys.method, k.method),
        eq(idempotencyKeys.path, k.path),
        eq(idempotencyKeys.key, k.key),
        eq(idempotencyKeys.state, 'running'),
      ),
    )
}
