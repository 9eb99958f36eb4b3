// The test gate (decisions "Test gate"): with the agent setting test_gate {min_pass_rate}, a new prompt version
// (a patch of a prompt field, a deploy, a restore, a build's instructions step) is first inserted inactive, every
// test of the agent runs on it, and only a run at or above the rate lets the caller activate it. Below the rate,
// or when the run errors or outlasts the wait, the caller gets 409 tests_failed naming the run, and the candidate
// stays in the version list, inactive.
import { and, count, eq } from 'drizzle-orm'
import { agentTests, testRuns } from '~/db/schema'
import { ApiError, apiError } from '~/lib/errors'
import { runAgentTests, waitForRun, type GateCandidate, type RunQueue, type RunTest, type TestRun } from './runs'

export type { GateCandidate } from './runs'

export interface TestGate {
  min_pass_rate: number
}

/** How long a request waits for the gate's run: past it 409 tests_failed says the run is still going. A
 *  gateway in front usually gives up on a request after 60 to 120 s; 100 tests × 20 turns on a model engine
 *  take longer than any request should, and such an agent is better changed by a build or a run first. */
export const GATE_WAIT_MS = 100_000
/** A build's instructions step runs in a job: it may wait as long as the run's own job may take. */
export const BUILD_GATE_WAIT_MS = 30 * 60_000

/** The agent's gate (its settings.test_gate), null when none. */
export function gateOf(settings: Record<string, unknown> | null | undefined): TestGate | null {
  const g = settings?.test_gate as { min_pass_rate?: unknown } | null | undefined
  return g && typeof g.min_pass_rate === 'number' ? { min_pass_rate: g.min_pass_rate } : null
}

const failed = (message: string) => apiError('tests_failed', message)

/** Where a candidate can be seen, for the messages. */
const named = (candidates: GateCandidate[]) => candidates.map((c) => `${c.label} (${c.id})`).join(', ')

/**
 * Runs every test of the agent on the candidates and waits up to `waitMs` for the run. Answers the run when
 * the candidates may be activated, null when the agent has no test (nothing to run: the gate lets the change
 * through). Throws 409 tests_failed naming the run and the first failing assertion when the pass rate is
 * below the gate, when the run errors and when it is not finished in time; 429 quota_exceeded as a run
 * asked for over HTTP would.
 */
export async function enforceGate(
  runtime: RunQueue,
  accountId: string,
  agentId: string,
  gate: TestGate,
  candidates: GateCandidate[],
  waitMs: number,
): Promise<TestRun | null> {
  const [{ n }] = await runtime.database.db
    .select({ n: count() })
    .from(agentTests)
    .where(and(eq(agentTests.accountId, accountId), eq(agentTests.agentId, agentId)))
  if (!Number(n)) return null
  let queued: TestRun
  try {
    queued = await runAgentTests(runtime, accountId, agentId, { candidates })
  } catch (err) {
    // The last test deleted since the count: nothing to run.
    if (err instanceof ApiError && err.code === 'validation_error' && err.field === 'test_ids') return null
    throw err
  }
  const run = await waitForRun(runtime.database, queued.run_id, waitMs)
  const kept =
    candidates.length === 1
      ? `The candidate ${named(candidates)} stays listed, inactive.`
      : `The candidates ${named(candidates)} stay listed, inactive.`
  if (!run)
    throw failed(
      `Test run ${queued.run_id} did not finish within ${waitMs / 1000} s, so the candidate was not activated. ${kept} Once GET /v1/test-runs/${queued.run_id} shows it passed, restore the candidate.`,
    )
  if (run.status === 'error')
    throw failed(`Test run ${run.run_id} could not be carried out (${run.error ?? 'no reason given'}). ${kept}`)
  // Nothing graded (every test without assertions, or only judges the local engine skips): nothing fell short.
  if (run.pass_rate === null || run.pass_rate >= gate.min_pass_rate) return run
  throw failed(
    `Test run ${run.run_id} passed ${run.passed} of ${run.passed + run.failed} graded attempts: pass rate ${run.pass_rate}, below test_gate.min_pass_rate ${gate.min_pass_rate}. First failure: ${await firstFailure(runtime, run)} ${kept}`,
  )
}

/** The first failing attempt in run order: its test, turn (1-based) and failing assertion, or its error. */
async function firstFailure(runtime: RunQueue, run: TestRun): Promise<string> {
  const [row] = await runtime.database.db
    .select({ tests: testRuns.tests })
    .from(testRuns)
    .where(eq(testRuns.id, run.run_id))
  const tests = (row?.tests ?? []) as unknown as RunTest[]
  const nameOf = (id: string) => tests.find((t) => t.test_id === id)?.name ?? id
  for (const r of run.results) {
    const which = `test "${nameOf(r.test_id)}" (${r.test_id}${run.results.some((x) => x.attempt > 1) ? `, attempt ${r.attempt}` : ''})`
    if (r.status === 'error') return `${which} could not be played: ${r.error ?? 'no reason given'}.`
    if (r.status !== 'failed') continue
    for (const [i, turn] of r.turns.entries()) {
      const a = turn.assertions.find((x) => x.passed === false)
      if (a) return `${which}, turn ${i + 1}, ${a.type}: ${a.detail}`
    }
  }
  return 'none recorded.'
}
