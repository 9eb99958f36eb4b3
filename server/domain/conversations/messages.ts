// POST /conversations/{conv}/messages: one non-streaming turn. Order: the idempotency_key when one is sent
// (replay or 409 idempotency_key_reused), the balance check (402; cached), the turn claim (a conditional
// UPDATE of turn_locked_until, so two instances cannot run turns of one conversation at once: 409
// turn_in_progress; a refused claim is explained as 404, 410 conversation_deleted or 409
// conversation_ended) with the daily chat_messages quota in the same statement, then the engine, the tools
// and one statement that writes the turns, the records, the usage and the stored response. With warm caches
// a turn makes two round trips: claim (with its quota unit), write (issue 14; it made about 14).
import { and, eq, getTableColumns, isNull, lt, or, type SQL, sql } from 'drizzle-orm'
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import type { MessageBody } from './chat-schemas'
import type { Database } from '~/db/client'
import { conversations, messageKeys, type LatencyBreakdown } from '~/db/schema'
import type { Capability, CapabilityResult } from '~/kit/capability'
import {
  withKnowledge,
  type ChatMessage,
  type ChatResponse,
  type Surface,
  type ToolCall,
  type ToolSpec,
} from '~/kit/chat-engine'
import { emailsOf } from '~/kit/capability'
import { inSpan, setAttrs } from '~/kit/tracing'
import { Errors, apiError } from '~/lib/errors'
import type { Runtime, SessionRuntime } from '~/kit/runtime'
import { agentLanguage, agentLanguages, assertNotPaused, type AgentRow } from '~/domain/agents/agents'
import { effectiveLimits, quotaExceeded, refundQuota, utcDay } from '~/domain/limits/quotas'
import { mayDial, TRIAL_NO_CALLS } from '~/domain/limits/phone-network'
import { chatCost, checkBalance } from './billing'
import { systemPrompt, turnContext } from './turn-context'
import { loadConversation } from './read'
import { presentTurn, type ConversationRow, type TurnRow } from './chat-schemas'
import { sha256Hex } from '~/lib/opaque-token'
import { observeChatTurn } from '~/kit/metrics'
import { detectLanguage } from '~/lib/cues'

export { detectLanguage }
import {
  afterHoursMessage,
  ASK_IDENTITY,
  escalationMessage,
  fallbackMessage,
  isOpen,
  smallTalkOf,
  statedContact,
  wantsPerson,
} from './behaviour'
import { escalate, notificationEmails } from './escalation'

/** How long a turn may hold the conversation before another message may take over (a crashed instance). */
export const TURN_LOCK_MS = 60_000
/** decisions "Idempotency": message keys live 24 hours. */
export const MESSAGE_KEY_TTL_MS = 24 * 3600_000

export const turnInProgress = () =>
  apiError('turn_in_progress', 'A turn of this conversation is still running; retry when it has answered.')
export const conversationEnded = () => apiError('conversation_ended', 'The conversation has ended; start a new one.')

/**
 * Forgets message idempotency keys older than MESSAGE_KEY_TTL_MS (postMessage already ignores them; this
 * keeps the table from growing). A key still waiting for its turn is minutes old at most (the 60 s claim),
 * so the age cut never takes one in use. Answers how many were deleted.
 */
export async function sweepMessageKeys(database: Database, now = new Date()): Promise<number> {
  const gone = await database.db
    .delete(messageKeys)
    .where(lt(messageKeys.createdAt, new Date(now.getTime() - MESSAGE_KEY_TTL_MS)))
    .returning({ key: messageKeys.key })
  return gone.length
}

export interface MessageAnswer {
  replayed: boolean
  response: Record<string, unknown>
}

/** The visitor's language, kept to the agent's `languages` when it has them (another stays the fallback). */
function turnLanguage(agent: AgentRow, text: string, fallback: string | null): string | null {
  const detected = detectLanguage(text, fallback)
  const allowed = agentLanguages(agent)
  if (!detected || !allowed.length) return detected
  const primary = detected.split('-')[0]
  return allowed.find((l) => l === detected || l.split('-')[0] === primary) ?? fallback
}

/** The capabilities API chat may call for this agent: enabled on the agent, registered, and apiChat. */
export function chatTools(runtime: Pick<Runtime, 'registries'>, agent: AgentRow): Capability[] {
  return agent.capabilities
    .map((name) => runtime.registries.capabilities.get(name))
    .filter((c): c is Capability => !!c && c.apiChat)
}

export function toolSpec(c: Capability): ToolSpec {
  const { $schema: _, ...parameters } = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as Record<string, unknown>
  // Intents go to the engine as they are: only an engine without a model (local) reads them.
  return { name: c.name, description: c.description, parameters, ...(c.intents?.length ? { intents: c.intents } : {}) }
}

export const TRANSFER_TOOL = 'transfer_call'
const PHONE_CHANNELS = new Set(['phone_inbound', 'phone_outbound'])
const CLOSED_FOR_TRANSFER = 'We are closed right now, so I cannot put you through; someone will get back to you.'
/** The capability settings that name where a capability mails; empty, they fall back to notification_emails. */
const MAIL_SETTINGS = new Set(['lead_emails', 'ticket_emails', 'order_emails'])

/** A capability's settings from the agent, its mail destination falling back to notification_emails. */
function capabilitySettingsFor(agent: AgentRow, cap: Capability): Record<string, unknown> {
  const fallback = notificationEmails(agent)
  return Object.fromEntries(
    cap.needs.map((k) => {
      const value = agent.capabilitySettings?.[k]
      return [k, MAIL_SETTINGS.has(k) && !emailsOf(value).length && fallback.length ? fallback : value]
    }),
  )
}

/** Runs one tool call: unknown or disallowed tools and invalid arguments come back as a failed result. */
async function runTool(
  runtime: SessionRuntime,
  conv: ConversationRow,
  agent: AgentRow,
  tools: Capability[],
  call: ToolCall,
): Promise<CapabilityResult> {
  const cap = tools.find((c) => c.name === call.name)
  if (!cap) return { ok: false, message: `The tool ${call.name} is not available in this chat.` }
  const parsed = v.safeParse(cap.parameters, call.arguments)
  if (!parsed.success) return { ok: false, message: `Invalid arguments for ${cap.name}: ${parsed.issues[0].message}` }
  // decisions "business_hours": outside them nobody takes a transfer; the caller hears the after-hours message.
  if (cap.name === TRANSFER_TOOL && !isOpen(agent))
    return { ok: false, message: afterHoursMessage(agent) ?? CLOSED_FOR_TRANSFER }
  // A transfer of a phone call dials a leg that costs money: a trial on a real network may not (no leg is dialled).
  if (
    cap.name === TRANSFER_TOOL &&
    PHONE_CHANNELS.has(conv.channel) &&
    !(await mayDial(runtime.database, runtime.providers.telephony, conv.accountId))
  )
    return { ok: false, message: TRIAL_NO_CALLS }
  const settings = capabilitySettingsFor(agent, cap)
  const mailer = runtime.providers.mail
  return cap.run(
    {
      accountId: conv.accountId,
      agentId: agent.id,
      conversationId: conv.id,
      settings,
      notify: async (m) => {
        await mailer.send(
          { ...m, tags: { conversation_id: conv.id, agent_id: agent.id, capability: cap.name } },
          { database: runtime.database, accountId: conv.accountId },
        )
      },
    },
    parsed.output,
  )
}

export interface ToolRun {
  call: ToolCall
  result: CapabilityResult
  at: Date
}

/** Runs one tool call to its end; a tool that throws is a failed result the engine is told about. */
export async function runToolCall(
  runtime: SessionRuntime,
  conv: ConversationRow,
  agent: AgentRow,
  tools: Capability[],
  call: ToolCall,
): Promise<ToolRun> {
  // The name the engine asked for is named on the span only when it is one of the turn's tools.
  const named = tools.some((c) => c.name === call.name) ? call.name : 'unknown'
  const result = await inSpan('chat.tool', { 'svc.tool.name': named }, async (span) => {
    const r = await runTool(runtime, conv, agent, tools, call)
    setAttrs(span, { 'svc.tool.ok': r.ok })
    return r
  }).catch(
    (e: unknown): CapabilityResult => ({
      ok: false,
      message: `The tool ${call.name} failed: ${e instanceof Error ? e.message : 'error'}`,
    }),
  )
  return { call, result, at: new Date() }
}

export async function postMessage(
  runtime: Runtime,
  accountId: string,
  convId: string,
  body: v.InferOutput<typeof MessageBody>,
): Promise<MessageAnswer> {
  const { database } = runtime
  const key = body.idempotency_key
  // Only a message with an idempotency_key is hashed (a turn without one has no use for it).
  const textHash = key === undefined ? '' : sha256Hex(body.text)
  if (key !== undefined) {
    // As its reads: 404 for another account's (its existence is not revealed), 410 once soft-deleted.
    const conv = await loadConversation(database.db, [accountId], convId)
    const [known] = await database.db
      .select()
      .from(messageKeys)
      .where(and(eq(messageKeys.conversationId, conv.id), eq(messageKeys.key, key)))
    if (known && known.createdAt.getTime() > Date.now() - MESSAGE_KEY_TTL_MS) {
      if (known.textHash !== textHash)
        throw apiError(
          'idempotency_key_reused',
          'This idempotency_key was used on this conversation with a different text.',
          'idempotency_key',
        )
      if (known.response) return { replayed: true, response: known.response }
      // No response yet: its turn runs (the claim below then refuses, 409 turn_in_progress), or its
      // instance died after taking the key. Only the claim can tell: it succeeds once the dead turn's claim
      // has lapsed, and the key is then taken over below.
    }
    if (known)
      await dropKey(database, conv.id, key, lt(messageKeys.createdAt, new Date(Date.now() - MESSAGE_KEY_TTL_MS)))
    if (conv.status !== 'in_progress') throw conversationEnded()
  }
  // The balance answer is cached per account (billing.ts); a refusal still says 404/410/409 first when
  // the conversation itself is the problem, as before the claim existed.
  await checkBalance(database.db, accountId).catch(async (err) => {
    await diagnose(database, accountId, convId)
    throw err
  })

  // The claim: one statement takes the turn (only one message at a time, across processes, through the
  // row itself) and reads what the turn needs with it: the conversation, its history and the agent's
  // revision. A refusal is explained by a second read, off the hot path.
  const { quotas } = await effectiveLimits(database.db, accountId, database)
  const started = performance.now()
  const claimed = await inSpan('chat.claim', undefined, () =>
    claimTurn(database, accountId, convId, { limit: quotas.chat_messages, now: new Date() }),
  )
  if (!claimed) {
    await diagnose(database, accountId, convId)
    throw turnInProgress()
  }
  const { conv } = claimed
  let keyClaimed = false
  let written = false
  try {
    if (key !== undefined) {
      const take = () =>
        database.db
          .insert(messageKeys)
          .values({ conversationId: conv.id, key, textHash, response: null })
          .onConflictDoNothing()
          .returning({ key: messageKeys.key })
      let ins = await take()
      if (!ins.length) {
        // We hold the turn, so a key of this text still without a response belongs to a turn that can no
        // longer write (its instance died holding it; its claim lapsed): it is ours now. Another text's key,
        // or one with a response, stays as it is.
        await dropKey(database, conv.id, key, and(eq(messageKeys.textHash, textHash), isNull(messageKeys.response)))
        ins = await take()
      }
      if (!ins.length) throw turnInProgress()
      keyClaimed = true
    }
    const turn = await assembleTurn(runtime, claimed, body.text)
    // The turn context is cached per agent revision and a pause moves the revision: seen on the next turn.
    assertNotPaused(turn.agent)
    const completed = await inSpan('chat.engine', { 'svc.conversation.id': conv.id }, async (span) => {
      const done = await completeWithTools(runtime, conv, turn)
      setAttrs(span, { 'svc.turn.tool_calls': done.toolRuns.length, 'svc.turn.unanswered': done.reply.unanswered })
      return done
    })
    const response = await inSpan('chat.persist', { 'svc.conversation.id': conv.id }, () =>
      persistTurn(runtime, conv, body.text, key, turn, completed),
    )
    written = true
    observeChatTurn('chat', runtime.providers.chat.name, (performance.now() - started) / 1000)
    if (completed.handoff)
      await escalate(runtime, conv, turn.agent, { reason: completed.handoff.reason, visitorText: body.text }).catch(
        (err) =>
          console.error(`[chat] ${conv.id} escalation not recorded: ${err instanceof Error ? err.message : err}`),
      )
    return { replayed: false, response }
  } catch (err) {
    if (keyClaimed) await dropKey(database, conv.id, key!, undefined).catch(() => {})
    // A turn that was not written is not counted: the quota unit the claim took goes back with the hold, in
    // one transaction, so the hold sweep (holds.ts) never gives one unit back twice.
    if (written) await releaseTurn(database, conv.id)
    else
      await database
        .tx(async (tx) => {
          await refundQuota(tx, accountId, 'chat_messages')
          await tx.update(conversations).set({ turnLockedUntil: null }).where(eq(conversations.id, conv.id))
        })
        .catch(() => {})
    throw err
  }
}

/** Deletes a message idempotency key of the conversation where `also` holds (expired, or left by a dead turn). */
function dropKey(database: Database, convId: string, key: string, also: SQL | undefined) {
  return database.db
    .delete(messageKeys)
    .where(and(eq(messageKeys.conversationId, convId), eq(messageKeys.key, key), also))
}

/** Why a claim or a balance check was refused, as the client should hear it: 404, 410 or 409 ended. */
async function diagnose(database: Database, accountId: string, convId: string) {
  const now = await loadConversation(database.db, [accountId], convId)
  if (now.status !== 'in_progress') throw conversationEnded()
}

export interface Claimed {
  conv: ConversationRow
  /** Earlier turns, tool turns left out, oldest first. */
  history: ChatMessage[]
  /** agents.revision, or null when the conversation has no agent. */
  agentRevision: number | null
}

/**
 * The claim statement, built once per database and kept prepared (its SQL never changes). With `quota` it
 * also takes the day's chat_messages unit in the same statement (a CTE that inserts only when the claim
 * took the row), so a turn makes two round trips, not three: `quota_used` is null when the quota refused.
 */
function claimStatement(database: Database, quota: boolean) {
  const { db } = database
  const claim = db
    .update(conversations)
    .set({ turnLockedUntil: sql`now() + ${sql.raw(`interval '${TURN_LOCK_MS} milliseconds'`)}` })
    .where(
      and(
        eq(conversations.id, sql.placeholder('id')),
        eq(conversations.accountId, sql.placeholder('accountId')),
        eq(conversations.status, 'in_progress'),
        isNull(conversations.deletedAt),
        or(isNull(conversations.turnLockedUntil), lt(conversations.turnLockedUntil, sql`now()`)),
      ),
    )
    .returning()
  const columns = getTableColumns(conversations)
  const claimed = db.$with('claimed', columns).as(claim.getSQL())
  // The lock as it was before this claim (every part of one statement reads the same snapshot). Set and
  // lapsed means the turn that took it never wrote nor gave it back: its instance died after its claim had
  // taken a unit. This turn inherits that unit instead of taking another, so the counter stays equal to
  // the turns written.
  const prev = db
    .$with('prev', { held: sql<Date | null>`held`.as('held') })
    .as(sql`SELECT turn_locked_until AS held FROM conversations WHERE id = ${sql.placeholder('id')}`)
  const taken = db.$with('taken', { used: sql<number>`used`.as('used') }).as(
    sql`INSERT INTO quota_usage (account_id, day, kind, used)
      SELECT ${sql.placeholder('accountId')}::text, ${sql.placeholder('day')}::date, 'chat_messages', 1 FROM claimed
      WHERE 1 <= ${sql.placeholder('limit')}::int AND NOT EXISTS (SELECT 1 FROM prev WHERE held IS NOT NULL)
      ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + 1
      WHERE quota_usage.used + 1 <= ${sql.placeholder('limit')}::int
      RETURNING used`,
  )
  const fields = {
    ...(Object.fromEntries(Object.keys(columns).map((k) => [k, claimed[k as keyof typeof columns]])) as {
      [K in keyof typeof columns]: (typeof claimed)[K]
    }),
    history: sql<{ s: string; x: string }[]>`(SELECT coalesce(json_agg(json_build_object('s', t.speaker, 'x', t.text)
        ORDER BY t.turn_index) FILTER (WHERE t.turn_type <> 'tool'), '[]'::json)
      FROM turns t WHERE t.conversation_id = ${claimed.id})`,
    agentRevision: sql<number | null>`(SELECT a.revision FROM agents a WHERE a.id = ${claimed.agentId})`.mapWith((v) =>
      v === null ? null : Number(v),
    ),
    quotaUsed: quota
      ? sql<number | null>`coalesce((SELECT used FROM taken), (SELECT 0 FROM prev WHERE held IS NOT NULL))`.mapWith(
          (v) => (v === null ? null : Number(v)),
        )
      : sql<number | null>`null::int`,
    // The claim's commit does not wait for its WAL flush (issue 36): it only takes a lock (and a quota unit),
    // and the turn's write, which commits synchronously later, flushes the WAL up to and past it, so an
    // answered turn is as durable as before. A crash of the database in between loses at most the claim of a
    // turn that was never written (lock and unit gone together). Without the wait the quota row, which every
    // turn of the account updates, is locked for the statement only, not for a disk flush.
    asyncCommit: sql<string>`set_config('synchronous_commit', 'off', true)`,
  }
  return (quota ? db.with(claimed, prev, taken) : db.with(claimed))
    .select(fields)
    .from(claimed)
    .prepare(quota ? 'svc_claim_turn_quota' : 'svc_claim_turn')
}
const claimStatements = new WeakMap<Database, Map<boolean, ReturnType<typeof claimStatement>>>()

/**
 * Takes the turn (null: someone else holds it, or the conversation is not open). With `quota` ({limit})
 * the day's chat_messages unit is taken in the same statement; when the quota refuses, the turn is given
 * back and 429 quota_exceeded thrown.
 */
export async function claimTurn(
  database: Database,
  accountId: string,
  convId: string,
  quota?: { limit: number; now: Date },
): Promise<Claimed | null> {
  let statements = claimStatements.get(database)
  if (!statements) {
    statements = new Map()
    claimStatements.set(database, statements)
  }
  let statement = statements.get(!!quota)
  if (!statement) {
    statement = claimStatement(database, !!quota)
    statements.set(!!quota, statement)
  }
  const [row] = await statement.execute({
    id: convId,
    accountId,
    day: quota ? utcDay(quota.now) : null,
    limit: quota?.limit ?? null,
  })
  if (!row) return null
  const { history, agentRevision, quotaUsed, asyncCommit: _, ...conv } = row
  if (quota && quotaUsed === null) {
    await releaseTurn(database, conv.id)
    throw quotaExceeded('chat_messages', quota.limit, quota.now)
  }
  const list = typeof history === 'string' ? (JSON.parse(history) as typeof history) : history
  return {
    conv,
    agentRevision,
    history: list.map((t) => ({ role: t.s === 'visitor' ? ('user' as const) : ('assistant' as const), content: t.x })),
  }
}

/** Gives the turn back without writing one (a failed or refused turn). */
export async function releaseTurn(database: Database, convId: string) {
  await database.db
    .update(conversations)
    .set({ turnLockedUntil: null })
    .where(eq(conversations.id, convId))
    .catch(() => {})
}

export type Assembled = Awaited<ReturnType<typeof assembleTurn>>
export interface Completed {
  reply: ChatResponse
  input: number
  output: number
  toolRuns: ToolRun[]
  latencyMs: number
  /** The turn hands the conversation to a person: its answer is a handoff turn and the conversation escalates. */
  handoff: Handoff
}

/** How a surface other than API chat assembles its turn: its prompt, its tools, text added to the knowledge. */
export interface TurnSurface {
  surface: Surface
  tools: (agent: AgentRow) => Capability[]
  /** Appended to the knowledge block (the inbound history block of rule 4), or null. */
  extraKnowledge?: string | null
  /** Instructions that replace the surface's prompt (an outbound call's filled script), with their own tools;
   *  the agent's knowledge block still follows them. */
  script?: { instructions: string; tools: Capability[] } | null
  /** The surface's prompt replaced by a candidate version's body (an agent test run; decisions "Test runs"):
   *  the profile, refinement rules and knowledge still follow it, as for the active prompt. */
  prompt?: string | null
}

/** The agent's cached context, the history and the new message, the engine request. */
export async function assembleTurn(runtime: SessionRuntime, claimed: Claimed, text: string, on?: TurnSurface) {
  const { conv } = claimed
  if (!conv.agentId || claimed.agentRevision === null) throw Errors.notFound('Agent')
  const context = await turnContext(
    runtime,
    conv.accountId,
    conv.agentId,
    claimed.agentRevision,
    { tools: on?.tools ?? ((agent) => chatTools(runtime, agent)), spec: toolSpec },
    on?.surface ?? 'chat',
  )
  const { agent } = context
  const script = on?.script ?? null
  const tools = script ? script.tools : context.tools
  const system = script
    ? withKnowledge(script.instructions, context.knowledge)
    : on?.prompt !== undefined
      ? systemPrompt(agent, on.surface, on.prompt, context.knowledge)
      : context.system
  const visitorAt = new Date()
  const messages: ChatMessage[] = [...claimed.history, { role: 'user', content: text }]
  const request = {
    // The knowledge is last in the prompt, so an addition to it goes at the very end.
    system: on?.extraKnowledge ? `${system.trimEnd()}\n\n${on.extraKnowledge.trim()}\n` : system,
    tools: script ? script.tools.map(toolSpec) : context.toolSpecs,
    temperature: agent.temperature,
    maxTokens: agent.maxResponseTokens ?? undefined,
    largeModel: agent.useLargeModel,
  }
  return { agent, tools, messages, request, visitorAt }
}

/** The visitor's message of an assembled turn. */
export const visitorTextOf = (turn: Pick<Assembled, 'messages'>) =>
  turn.messages[turn.messages.length - 1]?.content ?? ''

/** Why a turn hands the conversation to a person (decisions "Escalation"), or null. */
export type Handoff = { reason: string } | null

/** A reply the host says itself (no engine call, no tokens). */
export function scriptedReply(text: string, handoff: Handoff = null, unanswered = false): Completed {
  return {
    reply: { text, toolCalls: [], unanswered, usage: { input: 0, output: 0 }, model: 'scripted' },
    input: 0,
    output: 0,
    toolRuns: [],
    latencyMs: 0,
    handoff,
  }
}

/**
 * The engine's answer, shaped by the agent's runtime settings (decisions "Behaviour: every stored setting
 * acts"): a visitor asking for a person is handed over (escalation_message, no engine call); when the engine
 * asks for tools they run and it answers again with their results; a transfer that ran is a handoff; small
 * talk is never unanswered; an unanswered question, or an engine that fails, gets fallback_message; with
 * collect_identity the first answer asks for contact details while the visitor is unknown.
 */
export async function completeWithTools(
  runtime: SessionRuntime,
  conv: ConversationRow,
  turn: Assembled,
): Promise<Completed> {
  const { agent, tools, messages, request } = turn
  const said = visitorTextOf(turn)
  if (wantsPerson(said)) return scriptedReply(escalationMessage(agent), { reason: 'The visitor asked for a person.' })
  const engine = runtime.providers.chat
  const started = performance.now()
  let input = 0
  let output = 0
  const toolRuns: ToolRun[] = []
  let reply: ChatResponse
  try {
    reply = await engine.complete({ ...request, messages })
    input = reply.usage.input
    output = reply.usage.output
    // One round of tool calls: run them, hand the results back, and take the engine's answer.
    if (reply.toolCalls.length) {
      const toolMessages: ChatMessage[] = []
      for (const call of reply.toolCalls) {
        const run = await runToolCall(runtime, conv, agent, tools, call)
        toolRuns.push(run)
        toolMessages.push({ role: 'tool', name: call.name, content: run.result.message })
      }
      const followUp = await engine.complete({
        ...request,
        messages: [...messages, { role: 'assistant', content: reply.text }, ...toolMessages],
      })
      input += followUp.usage.input
      output += followUp.usage.output
      reply = { ...followUp, unanswered: false }
    }
  } catch (err) {
    // decisions "fallback_message": an engine that fails after its own retry is a question not answered.
    console.error(`[chat] ${conv.id} the engine failed: ${err instanceof Error ? err.message : err}`)
    reply = {
      text: fallbackMessage(agent) ?? ENGINE_TROUBLE,
      toolCalls: [],
      unanswered: true,
      usage: { input, output },
      model: 'fallback',
    }
  }
  const shaped = shapeAnswer(agent, said, messages, reply, toolRuns, knownVisitor(conv))
  return { ...shaped, input, output, toolRuns, latencyMs: Math.round(performance.now() - started) }
}

/** Said when the engine fails and the agent has no fallback_message. */
export const ENGINE_TROUBLE = "I'm sorry, I can't answer that right now. Please try again in a moment."

/**
 * The settings' say on an engine answer, shared by chat and voice: a transfer that ran (or was refused out
 * of hours) hands over; small talk is never unanswered; an unanswered answer is fallback_message when set;
 * collect_identity asks for contact details in the first answer while the visitor is unknown.
 */
export function shapeAnswer(
  agent: AgentRow,
  said: string,
  messages: ChatMessage[],
  reply: ChatResponse,
  toolRuns: ToolRun[],
  known: boolean,
): { reply: ChatResponse; handoff: Handoff } {
  const handoff = handoffOf(agent, toolRuns)
  let text = reply.text
  let unanswered = reply.unanswered
  if (handoff && toolRuns.some((r) => r.call.name === TRANSFER_TOOL && r.result.ok))
    text = ownSetting(agent, 'escalation_message') ?? text
  if (smallTalkOf(said)) unanswered = false
  else if (unanswered) text = fallbackMessage(agent) ?? text
  if (!handoff && !known && asksIdentity(agent, { identity: {} }, messages)) text = `${text.trimEnd()} ${ASK_IDENTITY}`
  return { reply: { ...reply, text, unanswered }, handoff }
}

/** A transfer that ran hands the conversation over; so does one refused because it is outside business hours. */
export function handoffOf(agent: AgentRow, toolRuns: ToolRun[]): Handoff {
  const transfer = toolRuns.find((r) => r.call.name === TRANSFER_TOOL)
  if (transfer?.result.ok) return { reason: `Transferred: ${transfer.result.message}` }
  if (transfer && !isOpen(agent)) return { reason: 'Asked for a transfer outside business hours.' }
  return null
}

/** collect_identity: the first answer asks for contact details while the visitor is unknown, unless the visitor
 *  is saying goodbye (asking then reads as holding them back). */
export function asksIdentity(agent: AgentRow, conv: Pick<ConversationRow, 'identity'>, messages: ChatMessage[]) {
  return (
    agent.settings?.collect_identity === true &&
    !knownVisitor(conv) &&
    isFirstAnswer(messages) &&
    !identified(messages) &&
    smallTalkOf(messages[messages.length - 1]?.content ?? '') !== 'goodbye'
  )
}

export const ownSetting = (agent: AgentRow, key: string) => {
  const v = agent.settings?.[key]
  return typeof v === 'string' && v.trim() ? v : null
}
/** The conversation already knows how to reach the visitor. */
export const knownVisitor = (conv: Pick<ConversationRow, 'identity'>) =>
  typeof conv.identity?.email === 'string' || typeof conv.identity?.phone_e164 === 'string'
/** The visitor's first message: no earlier one in the history. */
const isFirstAnswer = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'user').length === 1
/** The visitor already gave an e-mail address or phone number in this message. */
const identified = (messages: ChatMessage[]) => {
  const c = statedContact(messages[messages.length - 1]?.content ?? '', null)
  return !!(c.email || c.phone_e164)
}

/**
 * What the turn teaches about the visitor (decisions "Identity from the conversation"): an e-mail or phone
 * number a capability captured, else one the visitor stated, for each that identity does not hold yet; null
 * when nothing is new. API-given identity is never overwritten.
 */
function learntIdentity(
  conv: Pick<ConversationRow, 'identity'>,
  text: string,
  toolRuns: ToolRun[],
  language: string | null,
): Record<string, string> | null {
  const have = conv.identity ?? {}
  const out: Record<string, string> = {}
  const captured = toolRuns.map((r) => (r.result.ok ? r.result.record : null)).filter((r) => !!r)
  const fromTool = (key: 'email' | 'phone') =>
    captured.map((r) => r?.[key]).find((x): x is string => typeof x === 'string' && !!x)
  const stated = statedContact(text, language)
  const email = fromTool('email')?.toLowerCase() ?? stated.email
  if (typeof have.email !== 'string' && email) {
    out.email = email
    out.email_source = fromTool('email') ? 'capability' : 'stated'
  }
  const toolPhone = fromTool('phone')
  const phone = (toolPhone ? statedContact(toolPhone, language).phone_e164 : undefined) ?? stated.phone_e164
  if (typeof have.phone_e164 !== 'string' && phone) out.phone_e164 = phone
  return Object.keys(out).length ? out : null
}

// The turn's write, of fixed text so that it stays prepared: $1 conversation, $2 the turns (JSON array),
// $3 turn_count, $4 updated_at, $5 language, $6 new records (JSON array or null), $7–$12 the session's
// usage key (account, agent, agent type, channel, session, started_at), $13 tokens, $14 cost, $15 the
// idempotency key or null, $16 its stored response, $17 identity learnt from the turn (JSON object or null),
// $18 true for a phone test of an agent test run, which is not billed (no usage row).
// Call turns carry their audio offsets in $2.
const WRITE_TURN = `
  WITH ins AS (
    INSERT INTO turns (conversation_id, turn_index, speaker, text, "timestamp", latency_ms, latency_breakdown,
      turn_type, detected_intent, detected_language, unanswered, tokens_in, tokens_out, tool, audio_offset_ms,
      audio_duration_ms)
    SELECT $1::text, r.i, r.speaker, r.text, r.ts, r.latency_ms, r.lb, r.turn_type, r.detected_intent,
      r.detected_language, r.unanswered, r.tokens_in, r.tokens_out, r.tool, r.ao, r.ad
    FROM jsonb_to_recordset($2::jsonb) AS r(i int, speaker text, text text, ts timestamptz,
      latency_ms int, lb jsonb, turn_type text, detected_intent text, detected_language text, unanswered boolean,
      tokens_in int, tokens_out int, tool jsonb, ao int, ad int)
    RETURNING 1
  ), conv_row AS (
    UPDATE conversations SET turn_count = $3::int, updated_at = $4::timestamptz, turn_locked_until = NULL,
      language = $5::text, records = CASE WHEN $6::jsonb IS NULL THEN records ELSE records || $6::jsonb END,
      identity = CASE WHEN $17::jsonb IS NULL THEN identity ELSE identity || $17::jsonb END,
      has_identity = has_identity OR $17::jsonb IS NOT NULL
    WHERE id = $1::text
    RETURNING 1
  ), usage_row AS (
    INSERT INTO usage_records (account_id, agent_id, agent_type, channel, session_id, started_at, tokens, cost_usd)
    SELECT $7::text, $8::text, $9::text, $10::text, $11::text, $12::timestamptz, $13::int, $14::numeric
    WHERE NOT $18::boolean
    ON CONFLICT (account_id, session_id) DO UPDATE
      SET tokens = usage_records.tokens + EXCLUDED.tokens, cost_usd = usage_records.cost_usd + EXCLUDED.cost_usd
    RETURNING 1
  ), key_row AS (
    UPDATE message_keys SET response = $16::jsonb
    WHERE $15::text IS NOT NULL AND conversation_id = $1::text AND key = $15::text
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM ins) AS turns`

/**
 * The visitor's message, the tool turns and the answer, the conversation's counters and records, the
 * session's usage and the stored response of an idempotency_key: one statement, so one transaction (the
 * turn rows, the counter and the usage land together or not at all) and one round trip. The turn indexes
 * follow turn_count, which the claim read and every writer of turns keeps equal to their number; the
 * primary key (conversation_id, turn_index) would refuse the write if they ever disagreed.
 */
export interface TurnAudio {
  offsetMs: number
  durationMs: number
}

export async function persistTurn(
  runtime: SessionRuntime,
  conv: ConversationRow,
  text: string,
  key: string | undefined,
  { agent, visitorAt }: Pick<Assembled, 'agent' | 'visitorAt'>,
  { reply, input, output, toolRuns, latencyMs, handoff }: Completed,
  audio?: { visitor: TurnAudio; agent: TurnAudio; latencyMs: number; breakdown: LatencyBreakdown },
) {
  const language = turnLanguage(agent, text, conv.language ?? agentLanguage(agent))
  const answeredAt = new Date()
  // Text from the engine and the tools is stored as is, except U+0000, which PostgreSQL cannot store.
  const stored = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '') : s)
  let index = conv.turnCount
  const base = { conversationId: conv.id, detectedLanguage: language, humanAgentId: null }
  const rows: TurnRow[] = [
    {
      ...base,
      turnIndex: index++,
      speaker: 'visitor',
      text,
      timestamp: visitorAt,
      latencyMs: null,
      latencyBreakdown: null,
      turnType: 'message',
      detectedIntent: null,
      unanswered: false,
      audioOffsetMs: audio?.visitor.offsetMs ?? null,
      audioDurationMs: audio?.visitor.durationMs ?? null,
      tool: null,
      tokensIn: 0,
      tokensOut: 0,
    },
  ]
  for (const r of toolRuns) {
    rows.push({
      ...base,
      turnIndex: index++,
      speaker: 'agent',
      text: stored(r.result.message),
      timestamp: r.at,
      latencyMs: null,
      latencyBreakdown: null,
      turnType: 'tool',
      detectedIntent: r.call.name,
      unanswered: false,
      audioOffsetMs: null,
      audioDurationMs: null,
      tool: {
        name: r.call.name,
        arguments: r.call.arguments,
        result: {
          ok: r.result.ok,
          message: r.result.message,
          record: r.result.record ?? null,
          outcome: r.result.outcome ?? null,
        },
      },
      tokensIn: 0,
      tokensOut: 0,
    })
  }
  rows.push({
    ...base,
    turnIndex: index++,
    speaker: 'agent',
    text: stored(reply.text),
    timestamp: answeredAt,
    latencyMs: audio?.latencyMs ?? latencyMs,
    latencyBreakdown: audio?.breakdown ?? null,
    turnType: handoff ? 'handoff' : 'answer',
    detectedIntent: null,
    unanswered: reply.unanswered,
    audioOffsetMs: audio?.agent.offsetMs ?? null,
    audioDurationMs: audio?.agent.durationMs ?? null,
    tool: null,
    tokensIn: input,
    tokensOut: output,
  })
  const learnt = learntIdentity(conv, text, toolRuns, language)
  const records = toolRuns
    .filter((r) => r.result.ok && r.result.record)
    .map((r) => ({
      ...r.result.record,
      capability: r.call.name,
      outcome: r.result.outcome ?? null,
      created_at: r.at.toISOString(),
    }))
  const response = {
    turn: presentTurn(rows[rows.length - 1]),
    turns: rows.map(presentTurn),
    usage: { tokens: { input, output, total: input + output }, model: reply.model },
  }
  const tokens = input + output
  const cost = chatCost(tokens, conv.channel)
  const noNul = (_key: string, value: unknown) => (typeof value === 'string' ? stored(value) : value)
  // JSON writes a NUL as \u0000: only then is the (slower) stripping pass needed.
  const toJson = (value: unknown) => {
    const text = JSON.stringify(value)
    return text.includes('\\u0000') ? JSON.stringify(value, noNul) : text
  }
  const turnsJson = toJson(
    rows.map((t) => ({
      i: t.turnIndex,
      speaker: t.speaker,
      text: t.text,
      ts: t.timestamp.toISOString(),
      latency_ms: t.latencyMs,
      lb: t.latencyBreakdown,
      turn_type: t.turnType,
      detected_intent: t.detectedIntent,
      detected_language: t.detectedLanguage,
      unanswered: t.unanswered,
      tokens_in: t.tokensIn,
      tokens_out: t.tokensOut,
      tool: t.tool,
      ao: t.audioOffsetMs,
      ad: t.audioDurationMs,
    })),
  )
  await runtime.database.executeSql(WRITE_TURN, [
    conv.id,
    turnsJson,
    index,
    answeredAt.toISOString(),
    conv.language ?? language,
    records.length ? toJson(records) : null,
    conv.accountId,
    conv.agentId,
    conv.agentType,
    conv.channel,
    conv.sessionId,
    conv.startedAt.toISOString(),
    tokens,
    cost,
    key ?? null,
    key === undefined ? null : JSON.stringify(response),
    learnt ? toJson(learnt) : null,
    conv.testRunId !== null,
  ])
  return response
}
