// Runs of an agent's tests (run_<n>; decisions "Test runs"): asked for over HTTP (or by the test gate through
// runAgentTests), carried out in the background by the agent_tests.run job (execute.ts), read and listed here.
// A run takes its turns (tests' turns × repeat) from the daily test_turns quota when it is asked for, so a
// run over the quota is refused at once rather than half run; it copies the tests as they are then.
import { and, asc, desc, eq, inArray, or, sql, not } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { agentTests, promptVersions, testRuns } from '~/db/schema'
import { loadAgent } from '~/domain/agents/rows'
import { consumeQuota } from '~/domain/limits/quotas'
import { hasLiveJob, type Queue } from '~/kit/job'
import type { Runtime } from '~/kit/runtime'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { AttemptResult, CreateRunBody, RunStatus, TestSurface, TestTurn } from './schemas'

export const RUN_JOB = 'agent_tests.run'

export type TestRunRow = typeof testRuns.$inferSelect
/** A test as a run copied it. */
export interface RunTest {
  test_id: string
  name: string
  surface: TestSurface
  turns: TestTurn[]
  /** The candidate of this test's surface when the test gate runs several at once (a build, a patch of two
   *  prompts); else the run's prompt_version_id applies. */
  prompt_version_id?: string
}

/** A candidate prompt version the test gate runs (inactive, listed). */
export interface GateCandidate {
  id: string
  label: string
  type: TestSurface
}

const runNotFound = () => Errors.notFound('Test run')

/** passed / (passed + failed), null while nothing was graded. */
export const passRate = (r: Pick<TestRunRow, 'passed' | 'failed'>) =>
  r.passed + r.failed ? Math.round((r.passed / (r.passed + r.failed)) * 10_000) / 10_000 : null

export function presentRunSummary(r: TestRunRow) {
  return {
    run_id: r.id,
    agent_id: r.agentId,
    prompt_version: r.promptVersion,
    status: r.status as RunStatus,
    total: r.total,
    passed: r.passed,
    failed: r.failed,
    skipped: r.skipped,
    pass_rate: passRate(r),
    error: r.error,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  }
}

export const presentRun = (r: TestRunRow) => ({
  ...presentRunSummary(r),
  results: r.results as unknown as AttemptResult[],
})
export type TestRun = ReturnType<typeof presentRun>

export async function loadRun(ex: Executor, accountId: string, id: string): Promise<TestRunRow> {
  const [row] = await ex
    .select()
    .from(testRuns)
    .where(and(eq(testRuns.id, id), eq(testRuns.accountId, accountId)))
  if (!row) throw runNotFound()
  return row
}

/** The prompt version a run names, by label or pv_<n> id; 400 validation_error (prompt_version) when the agent has none such. */
async function candidateVersion(ex: Executor, agentId: string, named: string) {
  const [pv] = await ex
    .select({ id: promptVersions.id, label: promptVersions.label })
    .from(promptVersions)
    .where(and(eq(promptVersions.agentId, agentId), or(eq(promptVersions.label, named), eq(promptVersions.id, named))))
  if (!pv)
    throw Errors.validation(
      'prompt_version',
      'The agent has no prompt version with that label (GET /agents/{agt}/prompts).',
    )
  return pv
}

/** What asking for a run needs: a Runtime, or a job's context as {database, queue: {send}} (a build step). */
export type RunQueue = Pick<Runtime, 'database'> & { queue: Pick<Queue, 'send'> }

export interface RunRequest {
  /** Default: every test of the agent. */
  testIds?: string[]
  /** Label or pv_<n> id of the candidate prompt version; default: the active prompts. */
  promptVersion?: string
  repeat?: number
  /** The test gate's candidates (one per surface at most), instead of promptVersion: each replaces the
   *  prompt of its own surface. */
  candidates?: GateCandidate[]
}

/**
 * Queues a run of the agent's tests (all, or `testIds`) against the candidate prompt version without
 * activating it, `repeat` times each, and answers it (status queued). The domain entry point for the test gate
 * too: pair it with waitForRun. 400 validation_error for an unknown test or version, or an agent without tests;
 * 429 quota_exceeded when the turns pass the day's test_turns.
 */
export async function runAgentTests(runtime: RunQueue, accountId: string, agentId: string, req: RunRequest = {}) {
  const repeat = req.repeat ?? 1
  const row = await runtime.database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId)
    const rows = await tx
      .select()
      .from(agentTests)
      .where(
        and(
          eq(agentTests.accountId, accountId),
          eq(agentTests.agentId, agentId),
          req.testIds ? inArray(agentTests.id, req.testIds) : undefined,
        ),
      )
      .orderBy(asc(agentTests.createdAt), asc(agentTests.id))
    if (req.testIds) {
      const missing = req.testIds.find((id) => !rows.some((r) => r.id === id))
      if (missing) throw Errors.validation('test_ids', `${missing} is not a test of this agent.`)
    }
    if (!rows.length)
      throw Errors.validation('test_ids', 'The agent has no tests; create one with POST /agents/{agt}/tests.')
    const pv = req.promptVersion ? await candidateVersion(tx, agentId, req.promptVersion) : null
    const candidates = req.candidates ?? null
    const tests: RunTest[] = rows.map((t) => {
      const mine = candidates?.find((c) => c.type === t.surface)
      return {
        test_id: t.id,
        name: t.name,
        surface: t.surface as TestSurface,
        turns: t.turns as TestTurn[],
        ...(mine ? { prompt_version_id: mine.id } : {}),
      }
    })
    const turns = tests.reduce((n, t) => n + t.turns.length, 0) * repeat
    await consumeQuota(tx, accountId, 'test_turns', turns, new Date(), runtime.database)
    const [run] = await tx
      .insert(testRuns)
      .values({
        accountId,
        agentId,
        promptVersion:
          pv?.label ?? (candidates?.length ? candidates.map((c) => c.label).join(', ') : agent.promptVersion),
        promptVersionId: pv?.id ?? candidates?.[0]?.id ?? null,
        tests: tests as unknown as Record<string, unknown>[],
        repeat,
        total: tests.length * repeat,
      })
      .returning()
    return run
  })
  // After the commit; a send lost to a crash is re-sent by the sweep (strandedRuns).
  await runtime.queue.send(RUN_JOB, { run_id: row.id }, { singletonKey: row.id })
  return presentRun(row)
}

export function createRun(runtime: Runtime, accountId: string, agentId: string, body: CreateRunBody) {
  return runAgentTests(runtime, accountId, agentId, {
    testIds: body.test_ids,
    promptVersion: body.prompt_version,
    repeat: body.repeat,
  })
}

export const isFinished = (status: string) => status === 'passed' || status === 'failed' || status === 'error'

/** The run once it has finished (passed, failed or error), polling its row; null after `timeoutMs`. */
export async function waitForRun(database: Database, runId: string, timeoutMs = 600_000): Promise<TestRun | null> {
  const deadline = Date.now() + timeoutMs
  for (let pause = 50; ; pause = Math.min(pause * 2, 1_000)) {
    const [row] = await database.db.select().from(testRuns).where(eq(testRuns.id, runId))
    if (!row) return null
    if (isFinished(row.status)) return presentRun(row)
    if (Date.now() + pause > deadline) return null
    await new Promise((r) => setTimeout(r, pause))
  }
}

export async function getRun(runtime: Runtime, accountId: string, id: string) {
  return presentRun(await loadRun(runtime.database.db, accountId, id))
}

/** Newest first, without results; `req` is bound to filters { account_id, agent_id } and sort -created_at,-id. */
export async function listRuns(runtime: Runtime, accountId: string, agentId: string, req: KeysetRequest) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const rows = await db
    .select()
    .from(testRuns)
    .where(
      and(
        eq(testRuns.accountId, accountId),
        eq(testRuns.agentId, agentId),
        afterPosition(req, testRuns.createdAt, testRuns.id),
      ),
    )
    .orderBy(desc(testRuns.createdAt), desc(testRuns.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentRunSummary)
}

/**
 * Runs to send again: queued for over `olderThanMs` (their send was lost), or unfinished with no job left to
 * finish them (every delivery failed or expired). The job claims the run, so a duplicate is harmless.
 */
export async function strandedRuns(database: Database, olderThanMs: number, queueSchema: string): Promise<string[]> {
  const rows = await database.db
    .select({ id: testRuns.id })
    .from(testRuns)
    .where(
      and(
        inArray(testRuns.status, ['queued', 'running']),
        sql`${testRuns.createdAt} < now() - make_interval(secs => ${olderThanMs / 1000})`,
        not(hasLiveJob(queueSchema, RUN_JOB, 'run_id', testRuns.id)),
      ),
    )
    .limit(100)
  return rows.map((r) => r.id)
}
