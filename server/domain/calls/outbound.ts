// Outbound calls: POST /calls (checks, script, line or queue), dialling through the telephony provider, the
// answer (a phone_outbound conv_u conversation whose media stream the voice session runs with the call's
// script), provider status callbacks, cancel, the queue of calls waiting for a line, and the sweep that
// reconciles calls whose instance died. Campaign calls go through the same functions; the campaign dialler
// (dialer.ts) registers how a settled call moves its contact on.
//
// A call holds a line from `ringing` until it ends. Every status change is a guarded move (calls.ts), so
// the provider, the session, a cancel and the sweep may race and one wins.
import { openingMetrics } from '~/domain/conversations/create'
import { and, asc, eq, isNull, sql } from 'drizzle-orm'
import type { Config } from '~/config'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { calls, conversations, dncEntries, instances, phoneNumbers } from '~/db/schema'
import type { JobContext } from '~/kit/job'
import type { Providers } from '~/kit/providers'
import type { Runtime, SessionRuntime } from '~/kit/runtime'
import type { InboundAnswer } from '~/kit/telephony'
import { apiError, Errors } from '~/lib/errors'
import { providerDetail } from '~/lib/provider-detail'
import { agentLanguage, agentVersionOf, assertNotPaused, loadAgent, resolveModel } from '~/domain/agents/agents'
import { addUsage, checkBalance } from '~/domain/conversations/billing'
import { conversationResource } from '~/domain/conversations/read'
import { emitEvent } from '~/domain/events/emit'
import { effectiveLimits } from '~/domain/limits/quotas'
import { assertMayDial } from '~/domain/limits/phone-network'
import { fillProfile } from '~/domain/profiles/placeholders'
import { assertDialable, dialRefusal } from '~/domain/phone-numbers/dialable'
import { loadProfileForCall, type ProfileRow } from '~/domain/profiles/profiles'
import { type CallRow, type CallScript, loadCall, moveCall, presentCall } from './calls'
import { mediaToken, mediaUrlOf } from './inbound'
import type { CallStatus, CreateCallBody } from './outbound-schemas'
import { lockCallLines, linesInUse, secondsToReset, takeDailyCall } from './quotas'
import { INSTANCE_ID } from './instance'
import { accountDialBlock, dncListed, pausedAgents, REFUSED_AT_DIAL } from './dial-checks'

/** What dialling needs: a Runtime, or a job's context. */
export interface OutboundCtx {
  database: Database
  providers: Providers
  config: Config
  send: JobContext['send']
}

export const outboundCtx = (r: SessionRuntime): OutboundCtx => ({
  database: r.database,
  providers: r.providers,
  config: r.config,
  send: r.queue.send,
})

/** A call that rings longer than this without the provider's word is not answered. */
export const RING_TIMEOUT_S = 120

/** How a campaign follows its calls (registered by the campaign dialler, so this module stays below it). */
export interface CampaignHooks {
  /** In the transaction that ended a campaign call: moves its contact on. */
  settled(tx: Executor, call: CallRow): Promise<void>
  /** After that transaction: a dispatch round for the campaign. */
  kick(ctx: OutboundCtx, campaignId: string): Promise<void>
}
let campaignHooks: CampaignHooks | null = null
export const setCampaignHooks = (hooks: CampaignHooks) => {
  campaignHooks = hooks
}

// ---------------------------------------------------------------------------------------------------------
// Creating a call

/** Every script's voicemail part: an answering machine ends the call at once, nothing said. */
const HANG_UP = { voicemail_message: null, voicemail_policy: 'hang_up' } as const satisfies Pick<
  CallScript,
  'voicemail_message' | 'voicemail_policy'
>

/** A profile's script for one call: the built prompt (or the role and goal) with the variables filled. */
export function profileScript(
  profile: ProfileRow,
  prompt: string | null,
  variables: Record<string, string>,
): CallScript {
  const filled = fillProfile({ role: profile.role, greeting: profile.greeting, prompt }, variables)
  const goal = prompt === null && profile.goal ? `\n\nGoal of this call: ${profile.goal}` : ''
  return {
    instructions: `${filled.prompt}${goal}`,
    greeting: filled.greeting,
    ...HANG_UP,
    capabilities: profile.capabilities,
    max_call_duration_s: profile.maxCallDurationS,
    prompt_version: prompt === null ? null : profile.promptVersion,
  }
}

/** The script of a call: the profile's (built prompt, or its role) or the inline role, filled. */
export async function scriptFor(
  ex: Executor,
  accountId: string,
  agentId: string,
  source: { profile_id?: string; role?: string; greeting?: string },
  variables: Record<string, string>,
): Promise<{ profileId: string | null; script: CallScript }> {
  if (source.profile_id) {
    const { profile, prompt } = await loadProfileForCall(ex, accountId, source.profile_id)
    if (profile.agentId !== agentId)
      throw Errors.validation('profile_id', 'The profile belongs to another agent of the account.')
    return { profileId: profile.id, script: profileScript(profile, prompt, variables) }
  }
  const filled = fillProfile({ role: source.role ?? '', greeting: source.greeting ?? null, prompt: null }, variables)
  return {
    profileId: null,
    script: {
      instructions: `You are ${filled.role}. You are calling the person who answers; be brief and polite.`,
      greeting: filled.greeting,
      ...HANG_UP,
      capabilities: [],
      max_call_duration_s: 600,
      prompt_version: null,
    },
  }
}

/** The caller id: the named number of the account, else the agent's number, else the account's first. */
export async function callerIdFor(ex: Executor, accountId: string, agentId: string, numberId?: string) {
  if (numberId) {
    const [n] = await ex
      .select({ e164: phoneNumbers.e164 })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.id, numberId), eq(phoneNumbers.accountId, accountId)))
    if (!n) throw Errors.notFound('Phone number')
    return n.e164
  }
  const [n] = await ex
    .select({ e164: phoneNumbers.e164 })
    .from(phoneNumbers)
    .where(eq(phoneNumbers.accountId, accountId))
    .orderBy(sql`${phoneNumbers.agentId} = ${agentId} DESC NULLS LAST`, asc(phoneNumbers.createdAt))
    .limit(1)
  return n?.e164 ?? null
}

export async function isDncListed(ex: Executor, accountId: string, phone: string) {
  const [hit] = await ex
    .select({ id: dncEntries.id })
    .from(dncEntries)
    .where(and(eq(dncEntries.accountId, accountId), eq(dncEntries.phoneE164, phone)))
  return !!hit
}

const dncError = () =>
  apiError('dnc_listed', 'The number is on the do-not-call list of the account; it is never dialled.', 'to')

/** POST /calls: 201 with the call ringing, or queued when every line of the account is busy. */
export async function createCall(runtime: Runtime, accountId: string, body: CreateCallBody) {
  const { database } = runtime
  const db = database.db
  if (body.profile_id && body.role !== undefined) throw Errors.validation('role', 'Give profile_id or role, not both.')
  if (!body.profile_id && body.role === undefined)
    throw Errors.validation('profile_id', 'A call needs profile_id or an inline role.')
  if (body.profile_id && body.greeting !== undefined)
    throw Errors.validation('greeting', 'greeting goes with an inline role; a profile has its own.')
  assertDialable(body.to, 'to')
  const agent = await loadAgent(db, accountId, body.agent_id)
  assertNotPaused(agent)
  await assertMayDial(database, runtime.providers.telephony, accountId)
  const variables = body.variables ?? {}
  const { profileId, script } = await scriptFor(db, accountId, agent.id, body, variables)
  const from = await callerIdFor(db, accountId, agent.id, body.from_number_id)
  await checkBalance(db, accountId)
  if (await isDncListed(db, accountId, body.to)) throw dncError()

  const row = await database.tx(async (tx) => {
    const limits = await effectiveLimits(tx, accountId, database)
    await lockCallLines(tx, accountId)
    if (!(await takeDailyCall(tx, accountId, limits)))
      throw apiError(
        'quota_exceeded',
        `The daily calls quota (max_calls_per_day ${limits.maxCallsPerDay}) is used up; it resets at 00:00 UTC.`,
        null,
        { 'Retry-After': String(secondsToReset()) },
      )
    const free = (await linesInUse(tx, accountId)) < limits.maxConcurrentCalls
    const now = new Date()
    const [created] = await tx
      .insert(calls)
      .values({
        accountId,
        agentId: agent.id,
        profileId,
        fromE164: from,
        toE164: body.to,
        status: free ? 'ringing' : 'queued',
        variables,
        script: script as never,
        provider: runtime.providers.telephony.name,
        ownerInstance: free ? INSTANCE_ID : null,
        startedAt: free ? now : null,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    return created
  })
  const dialled = row.status === 'ringing' ? await dialCall(outboundCtx(runtime), row) : row
  return presentCall(dialled)
}

// ---------------------------------------------------------------------------------------------------------
// Dialling

const telephonyUrl = (config: Config, provider: string, kind: 'status' | 'voice', callId: string) =>
  `${config.publicUrl}/telephony/${provider}/${kind}?call_id=${encodeURIComponent(callId)}`

/** A call's failure_reason when the provider refused or could not be reached: names no account, URL or secret. */
export const DIAL_FAILED =
  "provider_error: the telephony provider did not place the call (the service's log has its answer)."

/** Hands a ringing call to the provider; a refusal fails the call. Answers the call as it is now. */
export async function dialCall(ctx: OutboundCtx, row: CallRow): Promise<CallRow> {
  const telephony = ctx.providers.telephony
  try {
    const { providerCallId } = await telephony.placeCall({
      callId: row.id,
      from: row.fromE164,
      to: row.toE164,
      maxDurationS: (row.script as unknown as CallScript).max_call_duration_s ?? 600,
      statusUrl: telephonyUrl(ctx.config, telephony.name, 'status', row.id),
      answerUrl: telephonyUrl(ctx.config, telephony.name, 'voice', row.id),
    })
    const [saved] = await ctx.database.db
      .update(calls)
      .set({ providerCallId, updatedAt: new Date() })
      .where(and(eq(calls.id, row.id), isNull(calls.providerCallId)))
      .returning()
    return saved ?? (await loadCall(ctx.database.db, row.accountId, row.id))
  } catch (err) {
    // The provider's message names its account, its API URL and maybe more: it goes to the log, and the
    // tenant reads a public sentence (decisions "Abuse and cost (issue 30)").
    console.error(`[calls] ${row.id}: ${telephony.name} did not place the call: ${providerDetail(err)}`)
    return (
      (await settle(ctx, row.id, ['ringing'], {
        status: 'failed',
        outcome: 'failed',
        failureReason: DIAL_FAILED,
      })) ?? (await loadCall(ctx.database.db, row.accountId, row.id))
    )
  }
}

/**
 * Ends a call (from one of `from`) and follows up: the campaign contact moves on in the same transaction;
 * afterwards the freed line goes to the next queued call and the campaign gets a dispatch round.
 */
export async function settle(
  ctx: OutboundCtx,
  id: string,
  from: readonly CallStatus[],
  patch: Parameters<typeof moveCall>[3],
  tx?: Executor,
): Promise<CallRow | null> {
  const work = async (ex: Executor) => {
    const row = await moveCall(ex, id, from, patch)
    if (row?.campaignId && campaignHooks) await campaignHooks.settled(ex, row)
    return row
  }
  const row = tx ? await work(tx) : await ctx.database.tx(work)
  if (row && !tx) await afterSettled(ctx, row)
  return row
}

/** After a call left its line: the next queued call of the account, and the campaign's next dials. */
export async function afterSettled(ctx: OutboundCtx, row: CallRow) {
  await dispatchQueued(ctx, row.accountId).catch((err) => console.error(`[calls] dispatch: ${err}`))
  if (row.campaignId && campaignHooks)
    await campaignHooks.kick(ctx, row.campaignId).catch((err) => console.error(`[campaign] kick: ${err}`))
}

/**
 * Queued calls of the account (not campaign calls: those are dialled by their campaign) take free lines.
 * This is the moment a queued call is dialled, so the checks of POST /calls are made again here: a call of a
 * suspended or unpaid account (or one moved to the trial, on the real phone network), of a paused agent, to a number put on the do-not-call list since, or to a
 * number the dial rules now refuse (call_countries) ends `canceled` with a public failure_reason, undialled.
 */
export async function dispatchQueued(ctx: OutboundCtx, accountId: string) {
  const { database } = ctx
  const rows = await database.tx(async (tx) => {
    const [{ n }] = rowsOf<{ n: number }>(
      await tx.execute(sql`SELECT count(*)::int AS n FROM calls WHERE account_id = ${accountId} AND status = 'queued'`),
    )
    if (!Number(n)) return []
    const limits = await effectiveLimits(tx, accountId, database)
    await lockCallLines(tx, accountId)
    let free = limits.maxConcurrentCalls - (await linesInUse(tx, accountId))
    if (free <= 0) return []
    // A few more than the free lines: refused calls take none, so the calls behind them may dial this pass.
    const waiting = rowsOf<{ id: string; agent_id: string; to_e164: string }>(
      await tx.execute(sql`SELECT id, agent_id, to_e164 FROM calls WHERE account_id = ${accountId} AND status = 'queued'
          AND provider = ${ctx.providers.telephony.name}
          ORDER BY created_at, id LIMIT ${free + 20} FOR UPDATE SKIP LOCKED`),
    )
    if (!waiting.length) return []
    const blocked = await accountDialBlock(tx, accountId, ctx.providers.telephony)
    const paused = await pausedAgents(
      tx,
      waiting.map((w) => w.agent_id),
    )
    const listed = await dncListed(
      tx,
      accountId,
      waiting.map((w) => w.to_e164),
    )
    const dial: string[] = []
    for (const w of waiting) {
      const refused = dialRefusal(w.to_e164)
      const reason =
        blocked ??
        (paused.has(w.agent_id)
          ? REFUSED_AT_DIAL.paused
          : listed.has(w.to_e164)
            ? REFUSED_AT_DIAL.dnc
            : refused
              ? `The call was not dialled: ${refused}.`
              : null)
      if (reason) {
        await moveCall(tx, w.id, ['queued'], { status: 'canceled', outcome: 'canceled', failureReason: reason })
        continue
      }
      if (free <= 0) continue
      dial.push(w.id)
      free--
    }
    if (!dial.length) return []
    const now = new Date()
    return rowsOf<{ id: string }>(
      await tx.execute(sql`UPDATE calls SET status = 'ringing', owner_instance = ${INSTANCE_ID},
          started_at = ${now.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
        WHERE id IN (${sql.join(
          dial.map((id) => sql`${id}`),
          sql`, `,
        )}) AND status = 'queued'
        RETURNING id`),
    )
  })
  for (const { id } of rows) {
    const [row] = await database.db.select().from(calls).where(eq(calls.id, id))
    if (row) await dialCall(ctx, row)
  }
}

/** DELETE /calls/{call}: a queued or ringing call is canceled (a ringing one is hung up at the provider). */
export async function cancelCall(runtime: Runtime, accountId: string, id: string) {
  const ctx = outboundCtx(runtime)
  const current = await loadCall(runtime.database.db, accountId, id)
  if (current.status !== 'queued' && current.status !== 'ringing')
    throw apiError(
      'call_not_cancelable',
      `The call is ${current.status}; only a queued or ringing call can be canceled.`,
    )
  const row = await settle(ctx, id, ['queued', 'ringing'], { status: 'canceled', outcome: 'canceled' })
  if (!row) {
    const now = await loadCall(runtime.database.db, accountId, id)
    throw apiError('call_not_cancelable', `The call is ${now.status}; only a queued or ringing call can be canceled.`)
  }
  if (current.status === 'ringing' && row.providerCallId)
    await runtime.providers.telephony.hangUp(row.providerCallId).catch((err) => {
      console.error(`[calls] ${id}: provider hang-up failed: ${err instanceof Error ? err.message : err}`)
    })
  return presentCall(row)
}

// ---------------------------------------------------------------------------------------------------------
// The provider's side

/** The answer webhook of an outbound call: open its phone_outbound conversation and connect the media. */
export async function answerOutboundCall(
  runtime: Runtime,
  a: { callId: string; providerCallId: string; answeredBy: 'human' | 'machine' | null; publicUrl?: string },
): Promise<InboundAnswer> {
  const { database } = runtime
  const [call] = await database.db.select().from(calls).where(eq(calls.id, a.callId))
  if (!call || (call.status !== 'ringing' && call.status !== 'in_progress')) return { kind: 'refuse', message: '' }
  const provider = call.provider
  const sessionId = `tel_${provider}_${a.providerCallId}`
  const convId = await database.tx(async (tx) => {
    const [known] = await tx
      .select({ id: conversations.id })
      .from(conversations)
      .where(and(eq(conversations.accountId, call.accountId), eq(conversations.sessionId, sessionId)))
    if (known) return known.id
    const agent = await loadAgent(tx, call.accountId, call.agentId).catch(() => null)
    if (!agent) return null
    const script = call.script as unknown as CallScript
    const now = new Date()
    const [conv] = await tx
      .insert(conversations)
      .values({
        id: sql`'conv_u' || nextval('conversation_seq')`,
        accountId: call.accountId,
        agentId: agent.id,
        agentType: agent.agentType,
        channel: 'phone_outbound',
        status: 'in_progress',
        sessionId,
        agentVersion: agentVersionOf(agent),
        promptVersion: script.prompt_version,
        model: resolveModel(runtime, agent.useLargeModel),
        startedAt: now,
        updatedAt: now,
        identity: { phone_e164: call.toE164 },
        hasIdentity: true,
        custom: {
          call_id: call.id,
          from: call.fromE164,
          to: call.toE164,
          provider,
          provider_call_id: a.providerCallId,
          answered_by: a.answeredBy ?? 'human',
          ...(call.campaignId ? { campaign_id: call.campaignId } : {}),
        },
        metrics: openingMetrics(agent),
        language: agentLanguage(agent),
      })
      .onConflictDoNothing()
      .returning()
    if (!conv) return null
    const moved = await moveCall(tx, call.id, ['ringing', 'in_progress'], {
      status: 'in_progress',
      answeredAt: call.answeredAt ?? now,
      conversationId: conv.id,
      providerCallId: call.providerCallId ?? a.providerCallId,
    })
    if (!moved) throw new Error('call left ringing during its answer')
    await addUsage(tx, {
      accountId: call.accountId,
      agentId: conv.agentId,
      agentType: conv.agentType,
      channel: conv.channel,
      sessionId,
      startedAt: now,
      tokens: 0,
    })
    await emitEvent(tx, {
      accountId: call.accountId,
      type: 'conversation.started',
      data: await conversationResource(tx, conv, []),
    })
    return conv.id
  })
  if (!convId) return { kind: 'refuse', message: '' }
  return {
    kind: 'connect',
    mediaUrl: mediaUrlOf(a.publicUrl ?? runtime.config.publicUrl, provider),
    params: { conversation_id: convId, token: mediaToken(runtime.config.secret, convId) },
  }
}

/** A status callback of an outbound call. The end of an answered call is the voice session's to write. */
export async function onOutboundStatus(
  ctx: OutboundCtx,
  callId: string,
  e: { state: string; failureReason?: string | null },
  endLiveSession?: (conversationId: string) => void,
) {
  const [call] = await ctx.database.db.select().from(calls).where(eq(calls.id, callId))
  if (!call) return
  switch (e.state) {
    case 'ringing':
    case 'in_progress':
      return
    case 'no_answer':
      await settle(ctx, call.id, ['queued', 'ringing'], { status: 'no_answer', outcome: 'no_answer' })
      return
    case 'failed':
    case 'canceled':
      await settle(ctx, call.id, ['queued', 'ringing'], {
        status: 'failed',
        outcome: 'failed',
        failureReason: e.failureReason ?? (e.state === 'canceled' ? 'canceled_by_provider' : 'provider_failed'),
      })
      return
    case 'completed':
      // Completed without an answer webhook (a provider that never asked for media): nobody talked.
      if (call.status === 'ringing')
        await settle(ctx, call.id, ['ringing'], { status: 'no_answer', outcome: 'no_answer' })
      else if (call.status === 'in_progress' && call.conversationId) endLiveSession?.(call.conversationId)
      return
    default:
      return
  }
}

/** Inside finishCall's transaction: an outbound conversation's end completes its call. */
export async function completeCallOfConversation(
  ctx: OutboundCtx,
  tx: Executor,
  conv: { custom: Record<string, unknown> | null; channel: string },
  end: { durationS: number; reason: string; endedAt: Date },
): Promise<CallRow | null> {
  const callId = conv.channel === 'phone_outbound' ? conv.custom?.call_id : null
  if (typeof callId !== 'string') return null
  const outcome =
    end.reason === 'voicemail'
      ? 'voicemail'
      : end.reason === 'transferred'
        ? 'transferred'
        : end.reason === 'interrupted'
          ? 'interrupted'
          : 'answered'
  return settle(
    ctx,
    callId,
    ['in_progress', 'ringing'],
    { status: 'completed', outcome, durationS: end.durationS, endedAt: end.endedAt },
    tx,
  )
}

// ---------------------------------------------------------------------------------------------------------
// Instances and the sweep

/** This instance is alive (called every few seconds by startOutbound). */
export async function beat(db: Executor) {
  await db
    .insert(instances)
    .values({ id: INSTANCE_ID })
    .onConflictDoUpdate({ target: instances.id, set: { seenAt: sql`now()` } })
}

/**
 * A process stopping cleanly leaves the live set at once: the calls it still owns are then reconciled by
 * the other instances at their next pass instead of after the stale window.
 */
export async function retire(db: Executor) {
  await db.delete(instances).where(eq(instances.id, INSTANCE_ID))
}

/** Accounts with queued calls get their free lines (a safety net for a dispatch lost to a crash). */
export async function dispatchAllQueued(ctx: OutboundCtx) {
  const accounts = rowsOf<{ account_id: string }>(
    await ctx.database.db.execute(
      sql`SELECT DISTINCT account_id FROM calls WHERE status = 'queued' AND provider = ${ctx.providers.telephony.name} LIMIT 1000`,
    ),
  )
  for (const { account_id } of accounts) await dispatchQueued(ctx, account_id)
}
