// Tests of an agent (tst_<n>): create, list, read, patch, delete, and make one from a real conversation.
// Every query is scoped by account: another account's agent is 404 agent_not_found, its test 404 not_found.
// An agent holds at most 100 tests, counted under the agent's row lock so two creates cannot both take the
// last place. Regex patterns are compiled when a test is written (regex.ts), so a run never meets a bad one.
import { and, asc, count, desc, eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { agentTests, turns as turnsTable } from '~/db/schema'
import { defaultRedaction } from '~/domain/accounts/accounts'
import { loadAgent } from '~/domain/agents/rows'
import { loadConversation } from '~/domain/conversations/read'
import { redactText } from '~/domain/conversations/redact'
import type { Principal } from '~/domain/credentials/principal'
import type { Runtime } from '~/kit/runtime'
import { apiError, Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { checkPatterns } from './regex'
import {
  MAX_TESTS_PER_AGENT,
  MAX_TURNS,
  MAX_USER_TEXT,
  type CreateTestBody,
  type PatchTestBody,
  type TestSurface,
  type TestTurn,
} from './schemas'

export type AgentTestRow = typeof agentTests.$inferSelect

const testNotFound = () => Errors.notFound('Test')

export function presentTest(r: AgentTestRow) {
  return {
    test_id: r.id,
    agent_id: r.agentId,
    name: r.name,
    surface: r.surface as TestSurface,
    turns: r.turns as TestTurn[],
    reference_answers: r.referenceAnswers,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** The one account a test or run request acts for (data routes always resolve one). */
export function testAccount(account: { id: string | null }): string {
  if (!account.id) throw testNotFound()
  return account.id
}

export async function loadTest(ex: Executor, accountId: string, id: string, lock = false): Promise<AgentTestRow> {
  const q = ex
    .select()
    .from(agentTests)
    .where(and(eq(agentTests.id, id), eq(agentTests.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw testNotFound()
  return row
}

/** Every regex of the turns, compiled once: 400 validation_error naming turns.<i>.expect.<j>.pattern. */
function checkTurns(turns: TestTurn[]) {
  return checkPatterns(
    turns.flatMap((t, i) =>
      t.expect.flatMap((a, j) =>
        a.type === 'regex' ? [{ field: `turns.${i}.expect.${j}.pattern`, pattern: a.pattern }] : [],
      ),
    ),
  )
}

const tooMany = () =>
  apiError('plan_limit_reached', `An agent holds at most ${MAX_TESTS_PER_AGENT} tests; delete one to add another.`)

async function insertTest(
  runtime: Runtime,
  accountId: string,
  agentId: string,
  values: { name: string; surface: TestSurface; turns: TestTurn[]; referenceAnswers: string[] | null },
) {
  return runtime.database.tx(async (tx) => {
    await loadAgent(tx, accountId, agentId, true)
    const [{ n }] = await tx.select({ n: count() }).from(agentTests).where(eq(agentTests.agentId, agentId))
    if (Number(n) >= MAX_TESTS_PER_AGENT) throw tooMany()
    const [row] = await tx
      .insert(agentTests)
      .values({ accountId, agentId, ...values })
      .returning()
    return presentTest(row)
  })
}

export async function createTest(runtime: Runtime, accountId: string, agentId: string, body: CreateTestBody) {
  await loadAgent(runtime.database.db, accountId, agentId)
  await checkTurns(body.turns)
  return insertTest(runtime, accountId, agentId, {
    name: body.name,
    surface: body.surface,
    turns: body.turns,
    referenceAnswers: body.reference_answers,
  })
}

/** Newest first; `req` is bound to filters { account_id, agent_id } and sort -created_at,-id. */
export async function listTests(runtime: Runtime, accountId: string, agentId: string, req: KeysetRequest) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const rows = await db
    .select()
    .from(agentTests)
    .where(
      and(
        eq(agentTests.accountId, accountId),
        eq(agentTests.agentId, agentId),
        afterPosition(req, agentTests.createdAt, agentTests.id),
      ),
    )
    .orderBy(desc(agentTests.createdAt), desc(agentTests.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentTest)
}

export async function getTest(runtime: Runtime, accountId: string, id: string) {
  return presentTest(await loadTest(runtime.database.db, accountId, id))
}

export async function patchTest(runtime: Runtime, accountId: string, id: string, patch: PatchTestBody) {
  if (patch.turns) await checkTurns(patch.turns)
  return runtime.database.tx(async (tx) => {
    const cur = await loadTest(tx, accountId, id, true)
    const [row] = await tx
      .update(agentTests)
      .set({
        name: patch.name ?? cur.name,
        surface: patch.surface ?? cur.surface,
        turns: patch.turns ?? cur.turns,
        referenceAnswers: patch.reference_answers === undefined ? cur.referenceAnswers : patch.reference_answers,
        updatedAt: new Date(),
      })
      .where(eq(agentTests.id, cur.id))
      .returning()
    return presentTest(row)
  })
}

export async function deleteTest(runtime: Runtime, accountId: string, id: string) {
  const gone = await runtime.database.db
    .delete(agentTests)
    .where(and(eq(agentTests.id, id), eq(agentTests.accountId, accountId)))
    .returning({ id: agentTests.id })
  if (!gone.length) throw testNotFound()
}

const SURFACE_OF: Record<string, TestSurface> = {
  phone_inbound: 'phone',
  phone_outbound: 'phone',
  voice_chat: 'voice_chat',
}

/**
 * A test replaying a real conversation of the agent: its visitor turns (the first 20) as `user`, the agent's
 * answer to each as `reference_answers`, no assertions. Reading the transcript needs conversations:read as
 * well as agents:write, and the account's default_redaction masks the copied text as a transcript read would.
 */
export async function testFromConversation(
  runtime: Runtime,
  principal: Principal,
  accountId: string,
  agentId: string,
  conversationId: string,
) {
  if (principal.type !== 'master' && !principal.scopes.has('conversations:read'))
    throw apiError(
      'insufficient_scope',
      'Making a test from a conversation reads its transcript: the credential needs conversations:read as well.',
    )
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const conv = await loadConversation(db, [accountId], conversationId)
  if (conv.agentId !== agentId) throw Errors.validation('conversation_id', 'The conversation is not one of this agent.')
  const rows = await db
    .select()
    .from(turnsTable)
    .where(eq(turnsTable.conversationId, conv.id))
    .orderBy(asc(turnsTable.turnIndex))
  const redact = await defaultRedaction(runtime.database, accountId)
  const clean = (text: string) => (redact ? redactText(text).text : text)
  const turns: TestTurn[] = []
  const answers: string[] = []
  for (const t of rows) {
    if (t.speaker === 'visitor') {
      if (turns.length === MAX_TURNS) break
      const user = clean(t.text).slice(0, MAX_USER_TEXT)
      if (!user.trim()) continue
      turns.push({ user, expect: [] })
      answers.push('')
    } else if (t.speaker === 'agent' && turns.length && (t.turnType === 'answer' || t.turnType === 'handoff')) {
      const i = answers.length - 1
      answers[i] = answers[i] ? `${answers[i]} ${clean(t.text)}` : clean(t.text)
    }
  }
  if (!turns.length) throw Errors.validation('conversation_id', 'The conversation has no visitor turn to replay.')
  return insertTest(runtime, accountId, agentId, {
    name: `From ${conv.id}`,
    surface: SURFACE_OF[conv.channel] ?? 'chat',
    turns,
    referenceAnswers: answers,
  })
}
