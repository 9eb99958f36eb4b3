// POST /conversations/{conv}/messages: one non-streaming turn. Order: the conversation (404, 410
// conversation_deleted, 409 conversation_ended), the idempotency_key (replay or 409 idempotency_key_reused), the balance check (402),
// the turn claim (a conditional UPDATE of turn_locked_until, so two instances cannot run turns of one
// conversation at once: 409 turn_in_progress), the daily chat_messages quota, then the engine, the tools
// and one transaction that writes the turns, the records, the usage and the stored response.
import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm'
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import type { MessageBody } from './chat-schemas'
import type { Database } from '~/db/client'
import { conversations, messageKeys, turns } from '~/db/schema'
import type { Capability, CapabilityResult } from '~/kit/capability'
import { withKnowledge, type ChatMessage, type ToolCall, type ToolSpec } from '~/kit/chat-engine'
import { Errors, apiError } from '~/lib/errors'
import type { Runtime } from '~/kit/runtime'
import { loadAgent, type AgentRow } from '~/domain/agents/agents'
import { injectRules } from '~/domain/agents/refinement'
import { knowledgeFor } from '~/domain/kb/summary'
import { consumeQuota } from '~/domain/limits/quotas'
import { addUsage, checkBalance } from './billing'
import { loadConversation } from './read'
import { presentTurn, type ConversationRow, type TurnRow } from './chat-schemas'
import { sha256Hex } from '~/lib/opaque-token'

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

// A few function words per language: enough to tell the usual visitor languages apart, else the fallback.
const STOPWORDS: Record<string, string[]> = {
  en: ['the', 'is', 'and', 'what', 'how', 'you', 'do', 'please', 'my', 'me', 'can', 'are', 'your', 'i'],
  fr: ['le', 'la', 'les', 'est', 'et', 'vous', 'je', 'pour', 'quel', 'quelle', 'bonjour', 'merci', 'une', 'des'],
  es: ['el', 'la', 'los', 'es', 'y', 'usted', 'yo', 'para', 'qué', 'cuál', 'hola', 'gracias', 'una', 'por'],
  de: ['der', 'die', 'das', 'ist', 'und', 'sie', 'ich', 'für', 'was', 'wie', 'hallo', 'danke', 'eine', 'nicht'],
}

/** The visitor's language by a function-word count; ties and empty matches fall back (agent or conversation language). */
export function detectLanguage(text: string, fallback: string | null): string | null {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter(Boolean)
  let best: string | null = null
  let bestScore = 0
  for (const [lang, list] of Object.entries(STOPWORDS)) {
    const score = words.filter((w) => list.includes(w)).length
    if (score > bestScore) {
      best = lang
      bestScore = score
    }
  }
  return bestScore > 0 ? best : fallback
}

/** The capabilities API chat may call for this agent: enabled on the agent, registered, and apiChat. */
export function chatTools(runtime: Pick<Runtime, 'registries'>, agent: AgentRow): Capability[] {
  return agent.capabilities
    .map((name) => runtime.registries.capabilities.get(name))
    .filter((c): c is Capability => !!c && c.apiChat)
}

export function toolSpec(c: Capability): ToolSpec {
  const { $schema: _, ...parameters } = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as Record<string, unknown>
  return { name: c.name, description: c.description, parameters }
}

/** Runs one tool call: unknown or disallowed tools and invalid arguments come back as a failed result. */
async function runTool(
  runtime: Runtime,
  conv: ConversationRow,
  agent: AgentRow,
  tools: Capability[],
  call: ToolCall,
): Promise<CapabilityResult> {
  const cap = tools.find((c) => c.name === call.name)
  if (!cap) return { ok: false, message: `The tool ${call.name} is not available in this chat.` }
  const parsed = v.safeParse(cap.parameters, call.arguments)
  if (!parsed.success) return { ok: false, message: `Invalid arguments for ${cap.name}: ${parsed.issues[0].message}` }
  const settings = Object.fromEntries(cap.needs.map((k) => [k, agent.capabilitySettings?.[k]]))
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

function historyOf(rows: TurnRow[]): ChatMessage[] {
  const out: ChatMessage[] = []
  for (const t of rows) {
    if (t.turnType === 'tool') continue
    out.push({ role: t.speaker === 'visitor' ? 'user' : 'assistant', content: t.text })
  }
  return out
}

export async function postMessage(
  runtime: Runtime,
  accountId: string,
  convId: string,
  body: v.InferOutput<typeof MessageBody>,
): Promise<MessageAnswer> {
  const { database } = runtime
  // As its reads: 404 for another account's (its existence is not revealed), 410 once soft-deleted.
  const conv = await loadConversation(database.db, [accountId], convId)
  const key = body.idempotency_key
  const textHash = sha256Hex(body.text)
  if (key !== undefined) {
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
      throw turnInProgress()
    }
    if (known)
      await database.db
        .delete(messageKeys)
        .where(
          and(
            eq(messageKeys.conversationId, conv.id),
            eq(messageKeys.key, key),
            lt(messageKeys.createdAt, new Date(Date.now() - MESSAGE_KEY_TTL_MS)),
          ),
        )
  }
  if (conv.status !== 'in_progress') throw conversationEnded()
  await checkBalance(database.db, accountId)

  // The claim: only one message at a time, across processes, through the row itself.
  const claimed = await database.db
    .update(conversations)
    .set({ turnLockedUntil: sql`now() + ${`${TURN_LOCK_MS} milliseconds`}::interval` })
    .where(
      and(
        eq(conversations.id, conv.id),
        eq(conversations.status, 'in_progress'),
        isNull(conversations.deletedAt),
        or(isNull(conversations.turnLockedUntil), lt(conversations.turnLockedUntil, sql`now()`)),
      ),
    )
    .returning({ id: conversations.id })
  if (!claimed.length) {
    const now = await loadConversation(database.db, [accountId], convId)
    throw now.status !== 'in_progress' ? conversationEnded() : turnInProgress()
  }
  const release = () =>
    database.db.update(conversations).set({ turnLockedUntil: null }).where(eq(conversations.id, conv.id))
  let keyClaimed = false
  try {
    if (key !== undefined) {
      const ins = await database.db
        .insert(messageKeys)
        .values({ conversationId: conv.id, key, textHash, response: null })
        .onConflictDoNothing()
        .returning({ key: messageKeys.key })
      if (!ins.length) throw turnInProgress()
      keyClaimed = true
    }
    await consumeQuota(database.db, accountId, 'chat_messages')
    const response = await runTurn(runtime, conv, body.text, key)
    return { replayed: false, response }
  } catch (err) {
    if (keyClaimed)
      await database.db
        .delete(messageKeys)
        .where(and(eq(messageKeys.conversationId, conv.id), eq(messageKeys.key, key!)))
        .catch(() => {})
    await release().catch(() => {})
    throw err
  }
}

/** One chat turn: assemble what the engine sees, complete it (with one round of tool calls), persist. */
async function runTurn(
  runtime: Runtime,
  conv: ConversationRow,
  text: string,
  key: string | undefined,
): Promise<Record<string, unknown>> {
  const turn = await assembleTurn(runtime, conv, text)
  const completed = await completeWithTools(runtime, conv, turn)
  return persistTurn(runtime, conv, text, key, turn, completed)
}

type Assembled = Awaited<ReturnType<typeof assembleTurn>>
type Completed = Awaited<ReturnType<typeof completeWithTools>>

/** The agent, the history and the new message, the system prompt with rules and knowledge, the tools. */
async function assembleTurn(runtime: Runtime, conv: ConversationRow, text: string) {
  const { database } = runtime
  const agent = conv.agentId ? await loadAgent(database.db, conv.accountId, conv.agentId) : null
  if (!agent) throw Errors.notFound('Agent')
  const previous = await database.db
    .select()
    .from(turns)
    .where(eq(turns.conversationId, conv.id))
    .orderBy(asc(turns.turnIndex))
  const knowledge = await knowledgeFor(database.db, agent, 'chat')
  // Refinement rules before the knowledge, so the knowledge stays last where retrieving engines read it.
  const system = withKnowledge(injectRules(agent.chatInstructions ?? '', agent.refinementRules), knowledge)
  const tools = chatTools(runtime, agent)
  const visitorAt = new Date()
  const messages: ChatMessage[] = [...historyOf(previous), { role: 'user', content: text }]
  const request = {
    system,
    tools: tools.map(toolSpec),
    temperature: agent.temperature,
    maxTokens: agent.maxResponseTokens ?? undefined,
    largeModel: agent.useLargeModel,
  }
  return { agent, tools, messages, request, visitorAt }
}

/** The engine's answer; when it asks for tools, they run and the engine answers again with their results. */
async function completeWithTools(runtime: Runtime, conv: ConversationRow, turn: Assembled) {
  const { agent, tools, messages, request } = turn
  const engine = runtime.providers.chat
  const started = performance.now()
  let reply = await engine.complete({ ...request, messages })
  let input = reply.usage.input
  let output = reply.usage.output
  const toolRuns: { call: ToolCall; result: CapabilityResult; at: Date }[] = []
  // One round of tool calls: run them, hand the results back, and take the engine's answer.
  if (reply.toolCalls.length) {
    const toolMessages: ChatMessage[] = []
    for (const call of reply.toolCalls) {
      const result = await runTool(runtime, conv, agent, tools, call).catch(
        (e: unknown) =>
          ({
            ok: false,
            message: `The tool ${call.name} failed: ${e instanceof Error ? e.message : 'error'}`,
          }) as CapabilityResult,
      )
      toolRuns.push({ call, result, at: new Date() })
      toolMessages.push({ role: 'tool', name: call.name, content: result.message })
    }
    const followUp = await engine.complete({
      ...request,
      messages: [...messages, { role: 'assistant', content: reply.text }, ...toolMessages],
    })
    input += followUp.usage.input
    output += followUp.usage.output
    reply = { ...followUp, unanswered: false }
  }
  const latencyMs = Math.round(performance.now() - started)
  return { reply, input, output, toolRuns, latencyMs }
}

/** The visitor's message, the tool turns and the answer in one transaction, with usage and the turn key. */
async function persistTurn(
  runtime: Runtime,
  conv: ConversationRow,
  text: string,
  key: string | undefined,
  { agent, visitorAt }: Assembled,
  { reply, input, output, toolRuns, latencyMs }: Completed,
) {
  const { database } = runtime
  const language = detectLanguage(
    text,
    conv.language ?? (typeof agent.settings?.default_language === 'string' ? agent.settings.default_language : null),
  )
  const answeredAt = new Date()

  return database.tx(async (tx) => {
    const [{ next }] = await tx
      .select({ next: sql<number>`coalesce(max(${turns.turnIndex}) + 1, 0)::int` })
      .from(turns)
      .where(eq(turns.conversationId, conv.id))
    let index = Number(next)
    const rows: (typeof turns.$inferInsert)[] = [
      {
        conversationId: conv.id,
        turnIndex: index++,
        speaker: 'visitor',
        text,
        timestamp: visitorAt,
        latencyMs: null,
        turnType: 'message',
        detectedLanguage: language,
        unanswered: false,
      },
    ]
    for (const r of toolRuns) {
      rows.push({
        conversationId: conv.id,
        turnIndex: index++,
        speaker: 'agent',
        text: r.result.message,
        timestamp: r.at,
        latencyMs: null,
        turnType: 'tool',
        detectedIntent: r.call.name,
        detectedLanguage: language,
        unanswered: false,
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
      })
    }
    rows.push({
      conversationId: conv.id,
      turnIndex: index++,
      speaker: 'agent',
      text: reply.text,
      timestamp: answeredAt,
      latencyMs,
      turnType: 'answer',
      detectedLanguage: language,
      unanswered: reply.unanswered,
      tokensIn: input,
      tokensOut: output,
    })
    const written = await tx.insert(turns).values(rows).returning()
    const records = toolRuns
      .filter((r) => r.result.ok && r.result.record)
      .map((r) => ({
        ...r.result.record,
        capability: r.call.name,
        outcome: r.result.outcome ?? null,
        created_at: r.at.toISOString(),
      }))
    await tx
      .update(conversations)
      .set({
        turnCount: index,
        updatedAt: answeredAt,
        turnLockedUntil: null,
        language: conv.language ?? language,
        ...(records.length ? { records: sql`${conversations.records} || ${JSON.stringify(records)}::jsonb` } : {}),
      })
      .where(eq(conversations.id, conv.id))
    await addUsage(tx, {
      accountId: conv.accountId,
      agentId: conv.agentId,
      agentType: conv.agentType,
      channel: conv.channel,
      sessionId: conv.sessionId,
      startedAt: conv.startedAt,
      tokens: input + output,
    })
    const answer = written[written.length - 1]
    const response = {
      turn: presentTurn(answer),
      turns: written.map(presentTurn),
      usage: { tokens: { input, output, total: input + output }, model: reply.model },
    }
    if (key !== undefined)
      await tx
        .update(messageKeys)
        .set({ response })
        .where(and(eq(messageKeys.conversationId, conv.id), eq(messageKeys.key, key)))
    return response
  })
}
