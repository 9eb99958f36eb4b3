// An inbound call reaches us as the telephony provider's webhook. We find the dialled number's agent,
// run the checks a call must pass (agent assigned, balance, the caller's hourly calls, the lines and the
// inbound daily quota) and either open a phone_inbound conversation (conv_u<n>) and tell the provider to
// connect its media stream to us, or refuse with a spoken message. A refused call on a number we hold is
// still recorded, as a `failed` conversation, so integrators see it. The provider may retry its webhook:
// the session id is derived from its call id, so a retry finds the same conversation instead of opening a
// second one.
import { openingMetrics } from '~/domain/conversations/create'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { and, eq, sql } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import type { InboundAnswer } from '~/kit/telephony'
import { ApiError } from '~/lib/errors'
import { activePromptLabel, agentLanguage, agentVersionOf, loadAgent, resolveModel } from '~/domain/agents/agents'
import { emitEvent } from '~/domain/events/emit'
import { addUsage, checkBalance } from '~/domain/conversations/billing'
import { conversationResource } from '~/domain/conversations/read'
import { SUMMARIZE_JOB } from '~/domain/conversations/summarize'
import { findNumberByE164 } from '~/domain/phone-numbers/numbers'
import { canonicalE164 } from '~/domain/phone-numbers/schemas'
import { CALLER_RATE_LIMITED, takeInboundSlot } from './quotas'
import { INSTANCE_ID } from './instance'

export const MESSAGES = {
  notInService: 'The number you have called is not in service. Goodbye.',
  noAgent: 'Sorry, no one can take your call on this number right now. Goodbye.',
  unavailable: 'Sorry, this line is not available right now. Please try again later. Goodbye.',
  busy: 'Sorry, all our lines are busy right now. Please call again later. Goodbye.',
  tooMany: 'Sorry, this number has called us too many times in the last hour. Please try again later. Goodbye.',
} as const

/** A number from a provider in E.164, or null for a withheld or unparsable one (the rules of POST /phone-numbers). */
export const callerE164 = (from: string): string | null => canonicalE164(from.trim())

const sessionIdOf = (provider: string, providerCallId: string) => `tel_${provider}_${providerCallId}`

const mediaKey = (secret: string) => createHmac('sha256', secret).update('svc-call-media-v1').digest()

/** The credential a media stream presents in its start parameters: it names the one conversation it may carry. */
export const mediaToken = (secret: string, conversationId: string) =>
  createHmac('sha256', mediaKey(secret)).update(conversationId).digest('base64url')

export function verifyMediaToken(secret: string, conversationId: string, token: string): boolean {
  const want = Buffer.from(mediaToken(secret, conversationId))
  const have = Buffer.from(token)
  return want.length === have.length && timingSafeEqual(want, have)
}

/** ws(s):// form of the public origin: the provider opens the media stream there. */
export const mediaUrlOf = (publicUrl: string, provider: string) =>
  `${publicUrl.replace(/^http/, 'ws')}/telephony/${provider}/media`

export interface InboundCall {
  provider: string
  providerCallId: string
  from: string
  to: string
  /** The origin the provider reached us at (http/public-origin.ts); SVC_PUBLIC_URL when absent. */
  publicUrl?: string
}

/** The provider's answer to an inbound call webhook. */
export async function answerInboundCall(runtime: Runtime, call: InboundCall): Promise<InboundAnswer> {
  return (await acceptInboundCall(runtime, call)).answer
}

/** The answer and the conversation that records the call (null when no account holds the number). */
export async function acceptInboundCall(
  runtime: Runtime,
  call: InboundCall,
): Promise<{ answer: InboundAnswer; conversationId: string | null }> {
  const { database } = runtime
  const to = callerE164(call.to) ?? call.to
  const number = await findNumberByE164(database.db, to)
  if (!number) return { answer: { kind: 'refuse', message: MESSAGES.notInService }, conversationId: null }
  const accountId = number.accountId
  const sessionId = sessionIdOf(call.provider, call.providerCallId)
  const [known] = await database.db
    .select()
    .from(conversations)
    .where(and(eq(conversations.accountId, accountId), eq(conversations.sessionId, sessionId)))
  if (known)
    return {
      answer: known.status === 'in_progress' ? connect(runtime, call, known.id) : refuseAgain(known),
      conversationId: known.id,
    }

  const phone = callerE164(call.from)
  const identity: Record<string, unknown> = phone ? { phone_e164: phone } : {}
  let refusal: { message: string; reason: string } | null = null
  if (!number.agentId) refusal = { message: MESSAGES.noAgent, reason: 'no_agent' }
  else {
    try {
      await checkBalance(database.db, accountId)
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      refusal = { message: MESSAGES.unavailable, reason: err.code }
    }
  }

  const row = await database.tx(async (tx) => {
    const agent = number.agentId ? await loadAgent(tx, accountId, number.agentId).catch(() => null) : null
    if (!refusal && !agent) refusal = { message: MESSAGES.noAgent, reason: 'no_agent' }
    // A paused agent (operator action) refuses like an unavailable line; the conversation says why.
    if (!refusal && agent?.pausedAt) refusal = { message: MESSAGES.unavailable, reason: 'agent_paused' }
    if (!refusal) {
      const slot = await takeInboundSlot(tx, database, accountId, phone)
      if (slot) refusal = { message: slot === CALLER_RATE_LIMITED ? MESSAGES.tooMany : MESSAGES.busy, reason: slot }
    }
    const now = new Date()
    const [conv] = await tx
      .insert(conversations)
      .values({
        id: sql`'conv_u' || nextval('conversation_seq')`,
        accountId,
        agentId: agent?.id ?? null,
        // A number without an agent still took a phone call: agent_type is one of the contract's AgentType.
        agentType: agent?.agentType ?? 'phone',
        channel: 'phone_inbound',
        status: refusal ? 'failed' : 'in_progress',
        sessionId,
        agentVersion: agent ? agentVersionOf(agent) : null,
        promptVersion: agent ? await activePromptLabel(tx, agent, 'phone') : null,
        model: agent ? resolveModel(runtime, agent.useLargeModel) : null,
        startedAt: now,
        endedAt: refusal ? now : null,
        updatedAt: now,
        identity,
        hasIdentity: !!phone,
        custom: {
          to_number_id: number.id,
          to: number.e164,
          provider: call.provider,
          provider_call_id: call.providerCallId,
        },
        metrics: {
          ...(agent ? openingMetrics(agent, now) : {}),
          ...(refusal ? { failure_reason: refusal.reason, duration_s: 0 } : {}),
        },
        language: agentLanguage(agent),
        // Until the media stream starts its session (on whichever instance it reaches), the call is this
        // instance's: if it dies first, the others close the conversation (reconcile.ts).
        ownerInstance: refusal ? null : INSTANCE_ID,
      })
      .onConflictDoNothing()
      .returning()
    // A concurrent retry of the same webhook won the insert: answer as it did.
    if (!conv) return null
    if (!refusal)
      await addUsage(tx, {
        accountId,
        agentId: conv.agentId,
        agentType: conv.agentType,
        channel: conv.channel,
        sessionId,
        startedAt: now,
        tokens: 0,
      })
    const out = await conversationResource(tx, conv, [])
    await emitEvent(tx, { accountId, type: refusal ? 'conversation.ended' : 'conversation.started', data: out })
    return conv
  })
  if (!row) return acceptInboundCall(runtime, call)
  if (refusal) {
    // A refused call is over at once; it gets its summary like any ended conversation.
    await runtime.queue.send(SUMMARIZE_JOB, { conversation_id: row.id }, { singletonKey: row.id })
    return { answer: { kind: 'refuse', message: (refusal as { message: string }).message }, conversationId: row.id }
  }
  return { answer: connect(runtime, call, row.id), conversationId: row.id }
}

function connect(runtime: Runtime, call: InboundCall, conversationId: string): InboundAnswer {
  return {
    kind: 'connect',
    mediaUrl: mediaUrlOf(call.publicUrl ?? runtime.config.publicUrl, call.provider),
    params: { conversation_id: conversationId, token: mediaToken(runtime.config.secret, conversationId) },
  }
}

function refuseAgain(conv: { metrics: Record<string, unknown> }): InboundAnswer {
  const reason = conv.metrics?.failure_reason
  return {
    kind: 'refuse',
    message:
      reason === 'no_agent'
        ? MESSAGES.noAgent
        : reason === CALLER_RATE_LIMITED
          ? MESSAGES.tooMany
          : reason === 'quota_exceeded' || reason === 'concurrency'
            ? MESSAGES.busy
            : MESSAGES.unavailable,
  }
}
