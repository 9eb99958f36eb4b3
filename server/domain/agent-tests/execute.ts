// Carrying out a test run (the agent_tests.run job). Each test is played `repeat` times against the candidate
// prompt version without activating it: chat and voice_chat tests through the chat turn itself (assembleTurn
// and completeWithTools, with the surface's prompt, tools and behaviour rules), held in memory, so no
// conversation is written; phone tests through a simulated call (phone.ts). The providers are dry: tools run
// and are recorded, but their mail goes nowhere and the telephony provider dials, hangs up or transfers
// nothing; speech is the offline provider, so a run costs nothing and answers the same every time.
//
// Safe to deliver twice: the run is claimed (queued or running → running), each attempt's result is appended
// only when the run does not hold it yet, and the run ends in one statement with its event.
import type { TranscribingProvider } from '~/kit/speech'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { agents, promptVersions, testRuns } from '~/db/schema'
import { loadAgent, type AgentRow } from '~/domain/agents/rows'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import { assembleTurn, chatTools, completeWithTools } from '~/domain/conversations/messages'
import { emitEvent } from '~/domain/events/emit'
import type { ChatMessage } from '~/kit/chat-engine'
import type { JobContext } from '~/kit/job'
import type { Mailer } from '~/kit/mailer'
import type { SessionRuntime } from '~/kit/runtime'
import { SIMULATED_TELEPHONY } from '~/kit/telephony'
import { statedContact } from '~/lib/cues'
import { gradeAttempt, type TurnOutcome } from './assertions'
import { dropTestCalls, phoneAttempt } from './phone'
import { presentRun, type RunTest, type TestRunRow } from './runs'
import type { AttemptResult, AttemptStatus, TestSurface } from './schemas'

/** Capabilities' mail in a test run: recorded in the run as the tool's result, sent nowhere. */
const DRY_MAIL: Mailer = {
  name: 'dry-run',
  async send() {
    return { id: 'dry-run' }
  },
}

/** The job's context as the turn and the voice session use it, with dry mail, telephony and offline speech. */
export function dryRuntime(
  ctx: Pick<JobContext, 'config' | 'database' | 'registries' | 'providers' | 'blobs' | 'send'>,
): SessionRuntime {
  const speech = ctx.registries.speech.get('simulated')
  const network = ctx.registries.telephony.get(SIMULATED_TELEPHONY)
  if (!speech?.transcribe || !network) throw new Error('the simulated speech and telephony providers are not installed')
  return {
    config: ctx.config,
    database: ctx.database,
    registries: ctx.registries,
    blobs: ctx.blobs,
    queue: { send: ctx.send },
    providers: {
      chat: ctx.providers.chat,
      blob: ctx.providers.blob,
      mail: DRY_MAIL,
      telephony: {
        ...network,
        async placeCall() {
          throw new Error('A test run places no call.')
        },
        async hangUp() {},
        async transfer() {},
      },
      speech,
      stt: speech as TranscribingProvider,
      tts: speech,
    },
  }
}

/** The in-memory conversation a chat or voice_chat attempt talks in (never written). */
function virtualConversation(run: TestRunRow, agent: AgentRow, surface: TestSurface): ConversationRow {
  const now = new Date()
  return {
    id: `${run.id}_chat`,
    accountId: agent.accountId,
    agentId: agent.id,
    agentType: agent.agentType,
    channel: surface === 'voice_chat' ? 'voice_chat' : 'api',
    status: 'in_progress',
    sessionId: `${run.id}_chat`,
    externalSessionId: null,
    agentVersion: null,
    promptVersion: run.promptVersion,
    model: null,
    startedAt: now,
    endedAt: null,
    updatedAt: now,
    identity: {},
    hasIdentity: false,
    custom: {},
    metrics: {},
    summary: null,
    summaryStatus: 'pending',
    outcome: null,
    escalated: false,
    language: null,
    hasRecording: false,
    recording: null,
    records: [],
    turnCount: 0,
    turnLockedUntil: null,
    country: null,
    deletedAt: null,
    deleteReason: null,
    visitorTokenHash: null,
    ownerInstance: null,
    utm: {},
    testRunId: run.id,
    analysis: null,
  }
}

/** A chat or voice_chat attempt: each visitor turn through the chat turn, the history kept in memory. */
async function chatAttempt(
  rt: SessionRuntime,
  run: TestRunRow,
  agent: AgentRow,
  test: RunTest,
  prompt: string | null | undefined,
): Promise<TurnOutcome[]> {
  const [{ revision }] = await rt.database.db
    .select({ revision: agents.revision })
    .from(agents)
    .where(eq(agents.id, agent.id))
  const conv = virtualConversation(run, agent, test.surface)
  const history: ChatMessage[] = []
  const out: TurnOutcome[] = []
  for (const turn of test.turns) {
    const assembled = await assembleTurn(rt, { conv, history: [...history], agentRevision: revision }, turn.user, {
      surface: test.surface === 'voice_chat' ? 'voice_chat' : 'chat',
      tools: (a) => chatTools(rt, a),
      prompt,
    })
    const done = await completeWithTools(rt, conv, assembled)
    history.push({ role: 'user', content: turn.user }, { role: 'assistant', content: done.reply.text })
    // As a written turn would: contact details the visitor gives make the visitor known (collect_identity).
    const stated = statedContact(turn.user, null)
    if (stated.email || stated.phone_e164) conv.identity = { ...stated, ...conv.identity }
    out.push({
      user: turn.user,
      answer: done.reply.text,
      tools: done.toolRuns.map((r) => ({
        name: r.call.name,
        arguments: r.call.arguments,
        ok: r.result.ok,
        message: r.result.message,
      })),
      unanswered: done.reply.unanswered,
      escalated: done.handoff !== null,
    })
  }
  return out
}

/** passed when every graded assertion passed and one was graded; skipped when none was (no assertions, or
 *  judges the local engine skips); failed otherwise. */
function statusOf(turns: AttemptResult['turns']): AttemptStatus {
  const graded = turns.flatMap((t) => t.assertions).filter((a) => a.passed !== null)
  if (graded.some((a) => !a.passed)) return 'failed'
  return graded.length ? 'passed' : 'skipped'
}

interface Candidate {
  id: string
  type: string
  body: string | null
}

async function attempt(
  rt: SessionRuntime,
  run: TestRunRow,
  agent: AgentRow,
  test: RunTest,
  n: number,
  candidate: Candidate | null,
): Promise<AttemptResult> {
  const mine = candidate?.type === test.surface ? candidate : null
  try {
    const outcomes =
      test.surface === 'phone'
        ? await phoneAttempt(
            rt,
            run.id,
            agent,
            run.promptVersion,
            mine?.id ?? null,
            test.turns.map((t) => t.user),
          )
        : await chatAttempt(rt, run, agent, test, mine ? (mine.body ?? '') : undefined)
    // A call that ended early (a transfer, the time limit) leaves the later turns unanswered.
    const all = test.turns.map(
      (t, i) => outcomes[i] ?? { user: t.user, answer: '', tools: [], unanswered: false, escalated: false },
    )
    const turns = await gradeAttempt(
      all,
      test.turns.map((t) => t.expect),
      rt.providers.chat,
      agent,
    )
    return { test_id: test.test_id, attempt: n, status: statusOf(turns), error: null, turns }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    return { test_id: test.test_id, attempt: n, status: 'error', error: message.slice(0, 500), turns: [] }
  }
}

/** Appends one attempt's result and counts it, unless the run holds it already (a second delivery). */
async function record(database: JobContext['database'], runId: string, r: AttemptResult) {
  const key = JSON.stringify([{ test_id: r.test_id, attempt: r.attempt }])
  const counts = {
    passed: r.status === 'passed' ? 1 : 0,
    failed: r.status === 'failed' || r.status === 'error' ? 1 : 0,
    skipped: r.status === 'skipped' ? 1 : 0,
  }
  await database.db
    .update(testRuns)
    .set({
      results: sql`${testRuns.results} || ${JSON.stringify([r])}::jsonb`,
      passed: sql`${testRuns.passed} + ${counts.passed}`,
      failed: sql`${testRuns.failed} + ${counts.failed}`,
      skipped: sql`${testRuns.skipped} + ${counts.skipped}`,
    })
    .where(and(eq(testRuns.id, runId), eq(testRuns.status, 'running'), sql`NOT ${testRuns.results} @> ${key}::jsonb`))
}

/** Ends the run (passed, failed or error) and emits test_run.completed with it, in one transaction. */
async function finish(database: JobContext['database'], runId: string, error: string | null) {
  await database.tx(async (tx) => {
    const [row] = await tx
      .update(testRuns)
      .set({
        status: sql`CASE WHEN ${error}::text IS NOT NULL THEN 'error' WHEN ${testRuns.failed} > 0 THEN 'failed' ELSE 'passed' END`,
        error,
        finishedAt: new Date(),
      })
      .where(and(eq(testRuns.id, runId), eq(testRuns.status, 'running')))
      .returning()
    if (row) await emitEvent(tx, { accountId: row.accountId, type: 'test_run.completed', data: presentRun(row) })
  })
}

export async function executeRun(ctx: JobContext, runId: string) {
  const { database } = ctx
  const [run] = await database.db
    .update(testRuns)
    .set({ status: 'running', startedAt: sql`coalesce(${testRuns.startedAt}, now())` })
    .where(and(eq(testRuns.id, runId), inArray(testRuns.status, ['queued', 'running'])))
    .returning()
  if (!run) return
  // Calls a crashed delivery of this run left behind.
  await dropTestCalls(database, run.id)
  let error: string | null = null
  try {
    const rt = dryRuntime(ctx)
    const agent = await loadAgent(database.db, run.accountId, run.agentId)
    // The run's candidate, and the gate's per-surface candidates (RunTest.prompt_version_id).
    const tests = run.tests as unknown as RunTest[]
    const ids = [...new Set([run.promptVersionId, ...tests.map((t) => t.prompt_version_id)].filter((x) => !!x))]
    const found = ids.length
      ? await database.db
          .select({ id: promptVersions.id, type: promptVersions.type, body: promptVersions.body })
          .from(promptVersions)
          .where(and(inArray(promptVersions.id, ids as string[]), eq(promptVersions.agentId, agent.id)))
      : []
    if (found.length < ids.length) throw new Error('The prompt version of this run no longer exists.')
    const byId = new Map(found.map((pv) => [pv.id, pv as Candidate]))
    const candidate = run.promptVersionId ? (byId.get(run.promptVersionId) ?? null) : null
    const done = new Set((run.results as unknown as AttemptResult[]).map((r) => `${r.test_id}#${r.attempt}`))
    for (const test of tests)
      for (let n = 1; n <= run.repeat; n++) {
        if (done.has(`${test.test_id}#${n}`)) continue
        const own = test.prompt_version_id ? (byId.get(test.prompt_version_id) ?? null) : candidate
        await record(database, run.id, await attempt(rt, run, agent, test, n, own))
      }
  } catch (err) {
    error = (err instanceof Error ? err.message : String(err)).slice(0, 500)
    ctx.log(`test run ${run.id} failed: ${error}`)
  }
  await finish(database, run.id, error)
}
