// Delivery engine. Two steps, both safe with any number of instances on one database:
//   dispatch: claim undispatched outbox events (FOR UPDATE SKIP LOCKED), insert one delivery per
//     enabled endpoint of that account subscribed to the type, and mark the events dispatched, all in
//     one transaction; a crash before the commit leaves the events undispatched, so nothing is lost.
//   send: claim due deliveries with a lease (locked_until + claim_token), post them concurrently up to
//     a bound (each account up to its fair share of it), record the attempt and schedule the retry. A
//     process killed mid-send leaves a lease that lapses, and the delivery is sent again (at least
//     once; the event id is the receiver's dedup key).
// The pump polls every SVC_JOB_POLL_SECONDS and runs once at start; a finished send wakes it again.
import { countWebhookDelivery } from '~/kit/metrics'
import { randomUUID } from 'node:crypto'
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Config } from '~/config'
import { rowsOf, type Database } from '~/db/client'
import { events, webhookDeliveries, webhookEndpoints } from '~/db/schema'
import { EVENTS_CHANNEL } from '~/domain/events/emit'
import { activeSecrets, type EndpointRow } from './endpoints'
import { DELIVERY_TIMEOUT_MS, postSigned } from './send'
import type { WebhookPump } from '~/kit/runtime'

const DISPATCH_BATCH = 200
/** Deliveries in flight per process: a dead receiver holds one slot for at most the 10 s timeout. */
export const MAX_IN_FLIGHT = 64
/** With notifications, the look on a timer is a backstop: for what no notification announces (a delivery
 *  whose lease lapsed, one retried by an instance that has died since). */
export const IDLE_BACKSTOP_MS = 15_000
/** Longer than the timeout, so a live sender always finishes before its lease lapses. */
const LEASE_SECONDS = Math.ceil(DELIVERY_TIMEOUT_MS / 1000) + 10

/** The body as sent: the outbox payload with its keys in the documented order. */
export function eventBody(p: Record<string, unknown>): string {
  return JSON.stringify({
    id: p.id,
    type: p.type,
    created_at: p.created_at,
    api_version: p.api_version,
    account_id: p.account_id,
    data: p.data,
  })
}

/** Fans out up to one batch of undispatched events; answers how many events it claimed. */
export async function dispatchBatch(database: Database, limit = DISPATCH_BATCH): Promise<number> {
  // A cheap look first, so an idle poll never opens a transaction.
  const [any] = await database.db.select({ id: events.id }).from(events).where(isNull(events.dispatchedAt)).limit(1)
  if (!any) return 0
  return database.tx(async (tx) => {
    const evs = await tx
      .select()
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.createdAt))
      .limit(limit)
      .for('update', { skipLocked: true })
    if (!evs.length) return 0
    const accountIds = [...new Set(evs.map((e) => e.accountId))]
    const eps = await tx
      .select({
        id: webhookEndpoints.id,
        accountId: webhookEndpoints.accountId,
        events: webhookEndpoints.events,
        createdAt: webhookEndpoints.createdAt,
      })
      .from(webhookEndpoints)
      .where(
        and(
          inArray(webhookEndpoints.accountId, accountIds),
          eq(webhookEndpoints.enabled, true),
          isNull(webhookEndpoints.deletedAt),
        ),
      )
    const now = new Date()
    const rows: (typeof webhookDeliveries.$inferInsert)[] = []
    for (const ev of evs) {
      // An endpoint created after the event was written does not receive it.
      for (const ep of eps) {
        if (ep.accountId !== ev.accountId || !ep.events.includes(ev.type) || ep.createdAt > ev.createdAt) continue
        rows.push({
          id: `dlv_${ulid()}`,
          accountId: ev.accountId,
          endpointId: ep.id,
          eventId: ev.id,
          eventType: ev.type,
          body: eventBody(ev.payload),
          status: 'pending',
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        })
      }
    }
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insert(webhookDeliveries)
        .values(rows.slice(i, i + 500))
        .onConflictDoNothing()
    await tx
      .update(events)
      .set({ dispatchedAt: now })
      .where(
        inArray(
          events.id,
          evs.map((e) => e.id),
        ),
      )
    return evs.length
  })
}

interface Claimed {
  id: string
  account_id: string
  endpoint_id: string
  event_type: string
  body: string
  attempt_count: number
  claim_token: string
}

/** The least number of slots any account may hold, however many accounts are active. */
export const MIN_ACCOUNT_SHARE = 8

/**
 * The most slots one account may hold in this process: an even split among itself, the other accounts
 * in flight and one more, so even a lone account with a hanging receiver leaves half the slots free for
 * a newcomer; never below MIN_ACCOUNT_SHARE.
 */
export function accountShare(max: number, otherAccountsInFlight: number): number {
  return Math.min(max, Math.max(MIN_ACCOUNT_SHARE, Math.floor(max / (otherAccountsInFlight + 2))))
}

/**
 * Leases up to `n` due deliveries of enabled endpoints, fairly: per account at most its share
 * (`accountShare` of `max`) minus what it already has in flight in this process (`inFlight`), taken
 * round-robin (every account's oldest before anyone's second), oldest first within an account. One
 * tenant's backlog to a dead receiver thus cannot take every slot, and another tenant's delivery is
 * claimed on the next pass. Without `max` the claim is oldest first with no per-account bound.
 */
/** One cheap look for both kinds of work: an event not yet fanned out, or a delivery that may be due now. */
async function anythingDue(database: Database): Promise<boolean> {
  const { rows } = await database.executeSql(
    `SELECT EXISTS (SELECT 1 FROM events WHERE dispatched_at IS NULL)
      OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now()
        AND (locked_until IS NULL OR locked_until < now())) AS due`,
  )
  return rows[0]?.due === true
}

export async function claimDue(
  database: Database,
  n: number,
  opts: { max?: number; inFlight?: ReadonlyMap<string, number> } = {},
): Promise<Claimed[]> {
  if (n <= 0) return []
  const token = randomUUID()
  const inFlight = opts.inFlight ?? new Map<string, number>()
  // An account already in flight counts the others; a new one counts them all.
  const shareIn = opts.max === undefined ? n : accountShare(opts.max, Math.max(0, inFlight.size - 1))
  const shareNew = opts.max === undefined ? n : accountShare(opts.max, inFlight.size)
  const held = JSON.stringify(Object.fromEntries(inFlight))
  return rowsOf<Claimed>(
    await database.db.execute(sql`
    UPDATE webhook_deliveries SET locked_until = now() + ${sql.raw(`interval '${LEASE_SECONDS} seconds'`)}, claim_token = ${token}
    WHERE id IN (
      SELECT w.id FROM webhook_deliveries w JOIN (
        SELECT d.id, d.next_attempt_at,
          row_number() OVER (PARTITION BY d.account_id ORDER BY d.next_attempt_at, d.id) AS rn,
          CASE WHEN (${held}::jsonb ->> d.account_id) IS NULL THEN ${shareNew}::int
            ELSE ${shareIn}::int - (${held}::jsonb ->> d.account_id)::int END AS budget
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
          AND (d.locked_until IS NULL OR d.locked_until < now())
          AND e.enabled AND e.deleted_at IS NULL) c ON c.id = w.id
      WHERE c.rn <= c.budget
        AND w.status IN ('pending', 'retrying') AND (w.locked_until IS NULL OR w.locked_until < now())
      ORDER BY c.rn, c.next_attempt_at
      LIMIT ${n}
      FOR UPDATE OF w SKIP LOCKED)
    RETURNING id, account_id, endpoint_id, event_type, body, attempt_count, claim_token`),
  )
}

/** The delay before the next attempt with ±10 % jitter, so retries of one outage do not arrive in step. */
export function retryDelayMs(schedule: number[], attemptsMade: number, random = Math.random): number | null {
  const base = schedule[attemptsMade - 1]
  if (base === undefined) return null
  return Math.round(base * 1000 * (0.9 + 0.2 * random()))
}

export interface Outcome {
  id: string
  token: string
  status: 'succeeded' | 'retrying' | 'exhausted'
  attempt: number
  entry: { attempt: number; at: string; status_code: number | null; latency_ms: number; error: string | null }
  next_at: string | null
  delivered_at: string | null
}

/** Sends one claimed delivery and answers the attempt's outcome (recorded by `recordOutcomes`). */
export async function attemptDelivery(config: Config, d: Claimed, endpoint: EndpointRow): Promise<Outcome> {
  const at = new Date()
  let secrets: string[] | null = null
  try {
    secrets = activeSecrets(config.secret, endpoint)
  } catch {}
  // A secret that no longer decrypts (SVC_SECRET changed) fails the attempt rather than looping on the lease.
  const r = secrets
    ? await postSigned({
        url: endpoint.url,
        secrets,
        body: d.body,
        deliveryId: d.id,
        eventType: d.event_type,
        allowPrivateHosts: config.allowPrivateHosts,
      })
    : {
        ok: false,
        statusCode: null,
        latencyMs: 0,
        error: 'The signing secret cannot be decrypted with the current SVC_SECRET; rotate the secret.',
      }
  const attempt = d.attempt_count + 1
  const entry = {
    attempt,
    at: at.toISOString(),
    status_code: r.statusCode,
    latency_ms: r.latencyMs,
    error: r.ok ? null : (r.error ?? `The receiver answered ${r.statusCode}.`),
  }
  const now = Date.now()
  const delay = r.ok ? null : retryDelayMs(config.webhookRetrySchedule, attempt)
  const status = r.ok ? 'succeeded' : delay === null ? 'exhausted' : 'retrying'
  countWebhookDelivery(status)
  return {
    id: d.id,
    token: d.claim_token,
    attempt,
    entry,
    status,
    next_at: delay === null ? null : new Date(now + delay).toISOString(),
    delivered_at: r.ok ? new Date(now).toISOString() : null,
  }
}

/**
 * Records attempts in one statement (one round trip however many finished together). Only rows still
 * leased by the same claim are written, so a sender whose lease lapsed cannot overwrite a newer attempt.
 */
export async function recordOutcomes(database: Database, outcomes: Outcome[]) {
  if (!outcomes.length) return
  await database.db.execute(sql`
    UPDATE webhook_deliveries w SET
      status = v.status, attempt_count = v.attempt, attempts = w.attempts || jsonb_build_array(v.entry),
      last_status_code = (v.entry->>'status_code')::int, last_error = v.entry->>'error',
      next_attempt_at = v.next_at, delivered_at = v.delivered_at, locked_until = NULL, claim_token = NULL, updated_at = now()
    FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb)
      AS v(id text, token text, status text, attempt int, entry jsonb, next_at timestamptz, delivered_at timestamptz)
    WHERE w.id = v.id AND w.claim_token = v.token`)
}

/** Gives a lease back (the endpoint vanished between the claim and the send). */
async function release(database: Database, d: Claimed) {
  await database.db
    .update(webhookDeliveries)
    .set({ lockedUntil: null, claimToken: null })
    .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.claimToken, d.claim_token)))
}

let current: WebhookPump | undefined
/** The process's pump, for the catch-up job. */
export const currentPump = () => current

export function startWebhookPump(opts: {
  database: Database
  config: Config
  intervalMs: number
  maxInFlight?: number
  log?: (m: string) => void
}): WebhookPump {
  const { database, config } = opts
  const max = opts.maxInFlight ?? MAX_IN_FLIGHT
  const log = opts.log ?? ((m) => console.error(`[webhooks] ${m}`))
  // Each send in flight with its claim, so a stop can give back the leases of those it cannot wait for.
  const running = new Map<Promise<void>, Claimed>()
  // Slots held per account, for the fair share of each claim.
  const byAccount = new Map<string, number>()
  let stopped = false
  let ticking = false
  let again = false
  let lastErrorAt = 0

  // Finished attempts wait here briefly and are written together.
  let pending: Outcome[] = []
  let flushing: Promise<void> | null = null
  const flush = async () => {
    while (pending.length) {
      const batch = pending
      pending = []
      await recordOutcomes(database, batch).catch((e) => {
        lastErrorAt = Date.now()
        log(`recording ${batch.length} attempt(s): ${e instanceof Error ? e.message : e}`)
      })
    }
  }
  const scheduleFlush = () => {
    if (flushing) return
    flushing = new Promise<void>((r) => setTimeout(r, 10)).then(flush).finally(() => {
      flushing = null
      if (pending.length) scheduleFlush()
      // Slots freed: refill once half of them are free, or when nothing is in flight.
      if (!stopped && running.size <= max / 2) tick()
    })
  }

  const pass = async () => {
    // An idle poll is one statement (decisions "Issue 36"): the claim's UPDATE and the events' look only run
    // when there is something to claim or dispatch.
    if (!(await anythingDue(database))) return
    while ((await dispatchBatch(database)) === DISPATCH_BATCH && !stopped) {
      /* drain the backlog */
    }
    const claimed = await claimDue(database, max - running.size, { max, inFlight: byAccount })
    if (!claimed.length) return
    const ids = [...new Set(claimed.map((c) => c.endpoint_id))]
    const eps = new Map(
      (await database.db.select().from(webhookEndpoints).where(inArray(webhookEndpoints.id, ids))).map((e) => [
        e.id,
        e,
      ]),
    )
    for (const c of claimed) {
      const ep = eps.get(c.endpoint_id)
      byAccount.set(c.account_id, (byAccount.get(c.account_id) ?? 0) + 1)
      const p: Promise<void> = (
        ep
          ? attemptDelivery(config, c, ep).then((o) => {
              pending.push(o)
              scheduleFlush()
              // This process's retries are due when it said: a look then (a little after, as now() moves on).
              if (o.next_at) wakeAt(Date.parse(o.next_at) + 50)
            })
          : release(database, c)
      )
        .catch((e) => {
          lastErrorAt = Date.now()
          log(`delivery ${c.id}: ${e instanceof Error ? e.message : e}`)
        })
        .finally(() => {
          running.delete(p)
          const left = (byAccount.get(c.account_id) ?? 1) - 1
          if (left > 0) byAccount.set(c.account_id, left)
          else byAccount.delete(c.account_id)
        })
      running.set(p, c)
    }
  }

  const tick = () => {
    if (stopped) return
    if (ticking) {
      again = true
      return
    }
    ticking = true
    void (async () => {
      try {
        do {
          again = false
          await pass()
        } while (again && !stopped)
      } catch (e) {
        lastErrorAt = Date.now()
        if (!stopped) log(`pass failed: ${e instanceof Error ? e.message : e}`)
      } finally {
        ticking = false
        wakeAt(Date.now() + (listening ? Math.max(IDLE_BACKSTOP_MS, opts.intervalMs) : opts.intervalMs))
      }
    })()
  }

  // When the pump looks (decisions "Issue 36: idle wake-ups"): at boot; when an event is written, on any
  // instance (emitEvent's NOTIFY on EVENTS_CHANNEL, delivered at commit); when this process's retry falls due;
  // on kick (a replay, the catch-up job, slots freed); and every IDLE_BACKSTOP_MS. Without notifications (the
  // LISTEN failed) every intervalMs (SVC_JOB_POLL_SECONDS), as before.
  let listening = false
  let timer: NodeJS.Timeout | undefined
  let timerAt = Number.POSITIVE_INFINITY
  /** A look at `at` (epoch ms) unless one is already set sooner. */
  function wakeAt(at: number) {
    if (stopped || at >= timerAt) return
    clearTimeout(timer)
    timerAt = at
    timer = setTimeout(
      () => {
        timer = undefined
        timerAt = Number.POSITIVE_INFINITY
        tick()
      },
      Math.max(0, at - Date.now()),
    )
    timer.unref()
  }
  void database
    .listen(EVENTS_CHANNEL, () => tick())
    .then((ok) => {
      listening = ok
    })
  tick()
  const pump: WebhookPump = {
    kick: tick,
    state: () => (Date.now() - lastErrorAt < 60_000 ? 'degraded' : 'ok'),
    inFlight: () => running.size,
    async stop() {
      stopped = true
      clearTimeout(timer)
      // Sends in flight get 2 s to finish; the leases of the others are given back so another instance sends
      // them at once instead of after the lease lapses (at least once: this one may still land its send,
      // but its outcome is not written, the claim token having changed).
      await Promise.race([Promise.allSettled([...running.keys()]), new Promise((r) => setTimeout(r, 2000))])
      await flush()
      if (running.size) {
        await Promise.allSettled([...running.values()].map((c) => release(database, c)))
        // The other instances' pumps look at once.
        await database.executeSql(`SELECT pg_notify('${EVENTS_CHANNEL}', '')`).catch(() => {})
      }
      if (current === pump) current = undefined
    },
  }
  current = pump
  return pump
}
