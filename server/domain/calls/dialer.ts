// The campaign dialler. A dispatch round locks the campaign row (FOR UPDATE: one round per campaign at a
// time, whichever instance runs it) and dials due contacts inside the schedule window (the contact's
// timezone, else the campaign's), within max_concurrent and the account's lines and daily calls, skipping
// do-not-call numbers. A contact is marked in_progress with its attempt number in the same transaction as
// its call row, and the unique (campaign, contact, attempt) index makes a second dial of one attempt
// impossible. When a campaign call ends (in the transaction that ends it) its contact completes, fails,
// or waits retry_delay_minutes for its next attempt (no answers, up to max_attempts); the campaign
// completes when every contact is final.
//
// Rounds run after a start (campaign routes), after each of the campaign's calls ends (on the instance
// that saw the end), at each retry's due time (a `campaign.dial` job with startAfter) and every minute
// for every running campaign (the `outbound.sweep` job, which also catches windows opening).
import { and, asc, eq, inArray, isNull, lte, or, type SQL, sql } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { agents, calls, campaignContacts, campaigns, dncEntries } from '~/db/schema'
import { ApiError } from '~/lib/errors'
import { effectiveLimits } from '~/domain/limits/quotas'
import { loadProfileForCall } from '~/domain/profiles/profiles'
import type { CallRow, CallScript } from './calls'
import { callerIdFor, dialCall, profileScript, setCampaignHooks, type OutboundCtx } from './outbound'
import { INSTANCE_ID } from './instance'
import { accountDialBlock } from './dial-checks'
import { dialRefusal } from '~/domain/phone-numbers/dialable'
import { linesInUse, lockCallLines, takeDailyCall } from './quotas'

export const CAMPAIGN_DIAL_JOB = 'campaign.dial'
/** Retries due sooner than this also get an in-process timer on the instance that scheduled them. */
const LOCAL_WAKE_MAX_MS = 10 * 60_000

export interface Schedule {
  timezone: string
  days: string[]
  start: string
  end: string
}

const formats = new Map<string, Intl.DateTimeFormat>()
function formatFor(tz: string) {
  let f = formats.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
    if (formats.size > 1000) formats.clear()
    formats.set(tz, f)
  }
  return f
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/** Day (mon … sun) and minute of the day at `now` in `tz`. */
export function localClock(tz: string, now: Date): { day: string; minute: number } {
  let day = 'mon'
  let hour = 0
  let minute = 0
  for (const p of formatFor(tz).formatToParts(now)) {
    if (p.type === 'weekday') day = p.value.slice(0, 3).toLowerCase()
    else if (p.type === 'hour') hour = Number(p.value) % 24
    else if (p.type === 'minute') minute = Number(p.value)
  }
  return { day, minute: hour * 60 + minute }
}

/** Whether `now` is inside the schedule's window in `tz` (end exclusive; 24:00 is the end of the day). */
export function inWindow(schedule: Schedule, tz: string | null, now: Date): boolean {
  let clock: { day: string; minute: number }
  try {
    clock = localClock(tz ?? schedule.timezone, now)
  } catch {
    clock = localClock(schedule.timezone, now)
  }
  return (
    schedule.days.includes(clock.day) &&
    clock.minute >= minutesOf(schedule.start) &&
    clock.minute < minutesOf(schedule.end)
  )
}

type ContactRow = typeof campaignContacts.$inferSelect

/** One dispatch round of a campaign; answers the calls it placed. */
export async function dispatchCampaign(ctx: OutboundCtx, campaignId: string, at?: Date): Promise<CallRow[]> {
  const { database } = ctx
  let now = at ?? new Date()
  const placed = await database.tx(async (tx) => {
    // The campaign row is locked; its agent's pause is read in the same statement.
    const [held] = await tx
      .select({ cmp: campaigns, agentPausedAt: agents.pausedAt })
      .from(campaigns)
      .leftJoin(agents, eq(agents.id, campaigns.agentId))
      .where(eq(campaigns.id, campaignId))
      .for('update', { of: campaigns })
    const cmp = held?.cmp
    // The clock is read once the round holds the campaign: a round that waited for the lock must not stamp
    // its calls with a time before the calls that ended meanwhile.
    now = at ?? new Date()
    if (!cmp || cmp.status !== 'running') return []
    // A paused agent's campaign is held (still running, nothing dialled); the minute sweep dials again
    // once the operator resumes the agent.
    if (held.agentPausedAt) return []
    // Checks at dial time: a suspended or unpaid account's campaigns dial nothing, nor does a trial's on the
    // real phone network (they stay running; the minute sweep dials again once the account is resumed, paid
    // for or back on a paid plan). Read uncached, at every round.
    if (await accountDialBlock(tx, cmp.accountId, ctx.providers.telephony)) return []
    // Instances dial through their own telephony provider: a campaign stays with the provider it began on.
    const provider = ctx.providers.telephony.name
    if (cmp.provider && cmp.provider !== provider) return []
    if (!cmp.provider) await tx.update(campaigns).set({ provider }).where(eq(campaigns.id, campaignId))
    const [counts] = rowsOf<{ live: number; pending: number }>(
      await tx.execute(sql`SELECT count(*) FILTER (WHERE status = 'in_progress')::int AS live,
        count(*) FILTER (WHERE status = 'pending')::int AS pending
        FROM campaign_contacts WHERE campaign_id = ${campaignId}`),
    )
    if (!Number(counts.pending)) {
      if (!Number(counts.live)) await completeCampaign(tx, campaignId, now)
      return []
    }
    let free = cmp.maxConcurrent - Number(counts.live)
    if (free <= 0) return []
    const due = await tx
      .select()
      .from(campaignContacts)
      .where(
        and(
          eq(campaignContacts.campaignId, campaignId),
          eq(campaignContacts.status, 'pending'),
          or(isNull(campaignContacts.nextAttemptAt), lte(campaignContacts.nextAttemptAt, now)),
        ),
      )
      .orderBy(sql`${campaignContacts.nextAttemptAt} ASC NULLS FIRST`, asc(campaignContacts.itemId))
      .limit(Math.max(50, free * 4))
    const open = due.filter((c) => inWindow(cmp.schedule, c.timezone, now))
    if (!open.length) return []
    const listed = new Set(
      (
        await tx
          .select({ phone: dncEntries.phoneE164 })
          .from(dncEntries)
          .where(
            and(
              eq(dncEntries.accountId, cmp.accountId),
              inArray(
                dncEntries.phoneE164,
                open.map((c) => c.phoneE164),
              ),
            ),
          )
      ).map((r) => r.phone),
    )
    const { profile, prompt } = await loadProfileForCall(tx, cmp.accountId, cmp.profileId)
    const limits = await effectiveLimits(tx, cmp.accountId, database)
    await lockCallLines(tx, cmp.accountId)
    const from = await callerIdFor(tx, cmp.accountId, cmp.agentId)
    const out: CallRow[] = []
    for (const c of open) {
      if (free <= 0) break
      if (listed.has(c.phoneE164)) {
        await moveContact(tx, c, { status: 'dnc_skipped', outcome: 'dnc_listed' })
        continue
      }
      // A number the dial rules refuse (premium-rate and the like, or outside call_countries) is skipped at
      // dial time rather than refused at import: call_countries may change between the two.
      if (dialRefusal(c.phoneE164)) {
        await moveContact(tx, c, { status: 'failed', outcome: 'invalid_phone' })
        continue
      }
      let script: CallScript
      try {
        script = profileScript(profile, prompt, c.variables)
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        await moveContact(tx, c, { status: 'failed', outcome: err.code })
        continue
      }
      if ((await linesInUse(tx, cmp.accountId, now)) >= limits.maxConcurrentCalls) break
      if (!(await takeDailyCall(tx, cmp.accountId, limits, now))) break
      // Stamped after the counts were read: a call that ended meanwhile (its settle committed between this
      // round's lock and its counts, freeing the line counted here) ended before this one starts. With the
      // round's clock the rows overlapped by a few milliseconds, and the campaign test saw 6 or 7 live
      // calls at max_concurrent 5 on a loaded machine.
      const startedAt = new Date()
      const [call] = await tx
        .insert(calls)
        .values({
          accountId: cmp.accountId,
          agentId: cmp.agentId,
          profileId: cmp.profileId,
          campaignId,
          contactItemId: c.itemId,
          attempt: c.attempts + 1,
          fromE164: from,
          toE164: c.phoneE164,
          status: 'ringing',
          variables: c.variables,
          script: script as never,
          provider: ctx.providers.telephony.name,
          ownerInstance: INSTANCE_ID,
          startedAt,
          createdAt: startedAt,
          updatedAt: startedAt,
        })
        .returning()
      await moveContact(tx, c, {
        status: 'in_progress',
        attempts: c.attempts + 1,
        lastCallId: call.id,
        nextAttemptAt: null,
      })
      out.push(call)
      free--
    }
    if (!out.length) {
      const [left] = rowsOf<{ n: number }>(
        await tx.execute(sql`SELECT count(*)::int AS n FROM campaign_contacts
          WHERE campaign_id = ${campaignId} AND status IN ('pending', 'in_progress')`),
      )
      if (!Number(left.n)) await completeCampaign(tx, campaignId, now)
    }
    return out
  })
  for (const call of placed) await dialCall(ctx, call)
  await scheduleWake(ctx, campaignId, now)
  return placed
}

async function moveContact(tx: Executor, c: ContactRow, patch: Partial<ContactRow>) {
  await tx
    .update(campaignContacts)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(campaignContacts.campaignId, c.campaignId), eq(campaignContacts.itemId, c.itemId)))
}

async function completeCampaign(tx: Executor, campaignId: string, now: Date) {
  await tx
    .update(campaigns)
    .set({ status: 'completed', finishedAt: now, updatedAt: now })
    .where(and(eq(campaigns.id, campaignId), inArray(campaigns.status, ['running', 'paused'])))
}

/** A round at the campaign's next retry time, when that is in the future. */
async function scheduleWake(ctx: OutboundCtx, campaignId: string, now: Date) {
  const [next] = rowsOf<{ at: string | Date | null }>(
    await ctx.database.db.execute(sql`SELECT min(next_attempt_at) AS at FROM campaign_contacts
      WHERE campaign_id = ${campaignId} AND status = 'pending' AND next_attempt_at > ${now.toISOString()}::timestamptz`),
  )
  if (!next?.at) return
  const at = new Date(next.at)
  await ctx.send(
    CAMPAIGN_DIAL_JOB,
    { campaign_id: campaignId },
    { startAfter: at, singletonKey: `${campaignId}@${at.getTime()}` },
  )
  // The job may land on an instance of another telephony provider (which skips the campaign) or wait for a
  // poll: this instance, which dialled the campaign, also wakes itself for a near retry. A duplicate round
  // is harmless (rounds serialise on the campaign row).
  const delay = at.getTime() - Date.now()
  if (delay < LOCAL_WAKE_MAX_MS)
    setTimeout(() => {
      dispatchCampaign(ctx, campaignId).catch((err) => console.error(`[campaign] ${campaignId}: ${err}`))
    }, Math.max(0, delay) + 20).unref()
}

/** In the transaction that ended a campaign call: its contact completes, fails or waits for a retry. */
async function contactSettled(tx: Executor, call: CallRow) {
  if (!call.campaignId || !call.contactItemId) return
  const [c] = await tx
    .select()
    .from(campaignContacts)
    .where(and(eq(campaignContacts.campaignId, call.campaignId), eq(campaignContacts.itemId, call.contactItemId)))
    .for('update')
  if (!c || c.lastCallId !== call.id || c.status !== 'in_progress') return
  const [cmp] = await tx.select().from(campaigns).where(eq(campaigns.id, call.campaignId))
  if (!cmp) return
  const now = new Date()
  if (call.status === 'no_answer' && c.attempts < cmp.maxAttempts) {
    await moveContact(tx, c, {
      status: 'pending',
      outcome: 'no_answer',
      nextAttemptAt: new Date(now.getTime() + cmp.retryDelayMinutes * 60_000),
    })
    return
  }
  const status = call.status === 'completed' ? 'completed' : call.status === 'no_answer' ? 'no_answer' : 'failed'
  await moveContact(tx, c, { status, outcome: call.outcome ?? call.status })
  const [left] = rowsOf<{ n: number }>(
    await tx.execute(sql`SELECT count(*)::int AS n FROM campaign_contacts
      WHERE campaign_id = ${call.campaignId} AND status IN ('pending', 'in_progress')`),
  )
  if (!Number(left.n)) await completeCampaign(tx, call.campaignId, now)
}

/** Where the next pass of this process's sweep resumes: the last campaign id it served. */
let sweepCursor: string | null = null

/** Campaign ids in numeric order (cmp_9 before cmp_10), the sweep's order. */
const sweepOrder = sql`length(${campaigns.id}), ${campaigns.id}`

/**
 * Running campaigns get a round (the sweep's safety net), at most `campaignSweepBatch` a pass (1,000; the
 * test-only SVC_CAMPAIGN_SWEEP_BATCH lowers it). A pass resumes after the last campaign the previous one
 * served and wraps around to the first, so every running campaign is served within ceil(running / batch)
 * passes: a fixed first window would starve the campaigns beyond it. Answers the ids served, in order.
 */
export async function dispatchAllCampaigns(ctx: OutboundCtx): Promise<string[]> {
  const batch = Math.max(1, ctx.config.campaignSweepBatch || 1000)
  const cursor = sweepCursor
  const after = cursor ? sql`(length(${campaigns.id}), ${campaigns.id}) > (${cursor.length}, ${cursor})` : undefined
  const page = (where: SQL | undefined, limit: number) =>
    ctx.database.db
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(and(eq(campaigns.status, 'running'), where))
      .orderBy(sweepOrder)
      .limit(limit)
  const running = await page(after, batch)
  // The end of the list was reached: the pass goes on from the first campaign (those before the cursor).
  if (running.length < batch && cursor)
    running.push(
      ...(await page(
        sql`(length(${campaigns.id}), ${campaigns.id}) <= (${cursor.length}, ${cursor})`,
        batch - running.length,
      )),
    )
  if (running.length) sweepCursor = running[running.length - 1].id
  for (const { id } of running)
    await dispatchCampaign(ctx, id).catch((err) => console.error(`[campaign] ${id}: ${err}`))
  return running.map((r) => r.id)
}

setCampaignHooks({
  settled: contactSettled,
  kick: async (ctx, id) => {
    await dispatchCampaign(ctx, id)
  },
})
