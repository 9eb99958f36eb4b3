// Step: Idempotency-Key on POST. The request is prepared (parsed, account resolved) before the key is
// claimed, because the resolved account is part of the key; a first answer is stored (sealed when it
// carries a secret) and replayed to the same credential for 24 hours. The credential is an API
// credential's id, or on the widget routes the widget token and visitor token (define-widget-route.ts).
import { getHeader, getQuery, readRawBody, setResponseHeader, type H3Event } from 'h3'
import type { AccountScope } from '~/domain/accounts/resolve'
import {
  bodyHash,
  checkKey,
  claim,
  complete,
  fence,
  release,
  scopedKey,
  type StoredAnswer,
} from '~/domain/idempotency/idempotency'
import { carriesSecret, openAnswer, sealAnswer } from '~/domain/idempotency/sealed'
import type { Tx } from '~/db/client'
import { withCommitFence } from '~/db/commit-fence'
import type { Runtime } from '~/kit/runtime'
import { ApiError, toApiError, type ErrorCode } from '~/lib/errors'
import type { ApiRouteMeta, MultipartPart } from '../route-meta'
import { canonicalPath } from './path'

export interface Prepared {
  params: unknown
  query: unknown
  body: unknown
  parts: MultipartPart[] | null
  account: AccountScope | null
}
export interface Answer {
  status: number
  kind: 'single' | 'list' | 'empty' | 'raw'
  payload: unknown
}

/**
 * Refusals that say "not now" rather than "no": the same request may succeed later, so the key is released
 * like a 5xx instead of storing them. Stored, a 409 turn_in_progress met by a retry after a crash (the dead
 * turn's claim not yet lapsed) answered every later retry with that key for 24 hours (chaos test finding).
 */
const RETRY_LATER: ReadonlySet<ErrorCode> = new Set([
  'turn_in_progress',
  'build_in_progress',
  'rate_limited',
  'quota_exceeded',
])

export async function withIdempotency(
  event: H3Event,
  runtime: Runtime,
  /** Who may replay the answer: the keys of one credential never meet another's. */
  credentialId: string,
  key: string,
  opts: ApiRouteMeta,
  prepare: () => Promise<Prepared>,
  execute: (p: Prepared) => Promise<Answer>,
) {
  checkKey(key)
  const raw = await readRawBody(event, false)
  // The request is parsed and its account resolved before the key is claimed, because the account is part
  // of the key; a request that fails there is stored and replayed like any other 4xx answer.
  let prepared: Prepared | undefined
  let failure: unknown
  try {
    prepared = await prepare()
  } catch (e) {
    failure = e
  }
  const scoped = scopedKey(key, prepared ? (prepared.account?.ids ?? []) : null, {
    header: getHeader(event, 'x-svc-account'),
    query: getQuery(event).account_id,
  })
  const k = {
    credentialId,
    method: event.method,
    path: canonicalPath(event),
    key: scoped,
  }
  const claimed = await claim(runtime.database, k, bodyHash(raw ?? undefined))
  if ('replay' in claimed) {
    setResponseHeader(event, 'Idempotent-Replayed', 'true')
    const stored = openAnswer(runtime.config.secret, k, claimed.replay)
    if (stored.kind === 'error') {
      const e = stored.payload as {
        code: string
        message: string
        field: string | null
        headers: Record<string, string>
      }
      throw new ApiError(stored.status, e.code as ErrorCode, e.message, e.field, e.headers)
    }
    return stored as Answer
  }
  const held = claimed.claimed
  try {
    if (!prepared) throw failure
    const ready = prepared
    // Every transaction of the handler also marks the claim committed, or fails if the claim was taken over.
    const answer = await withCommitFence(
      (tx: Tx) => fence(tx, held),
      () => execute(ready),
    )
    // A secret-bearing answer is never kept in clear, not even for the 24 hours of a replay.
    const stored = answer as StoredAnswer
    await complete(
      runtime.database,
      held,
      opts.secretResponse || carriesSecret(stored) ? sealAnswer(runtime.config.secret, k, stored) : stored,
    )
    return answer
  } catch (err) {
    const api = toApiError(err)
    if (api.status < 500 && !RETRY_LATER.has(api.code)) {
      await complete(runtime.database, held, {
        status: api.status,
        kind: 'error',
        payload: { code: api.code, message: api.message, field: api.field, headers: api.headers },
      })
    } else {
      await release(runtime.database, held).catch(() => {})
    }
    throw err
  }
}
