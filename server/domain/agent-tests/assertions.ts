// Grading one attempt of a test: each turn's assertions against what the agent answered in that turn. Text
// assertions are case-insensitive substring checks; regex runs on RE2 off the event loop (regex.ts); tool and
// flag assertions read the turn's record; a judge rubric is graded by the chat engine, and skipped (passed
// null) by the offline `local` engine, which cannot grade prose.
import type { AgentRow } from '~/domain/agents/rows'
import type { ChatEngine } from '~/kit/chat-engine'
import { matchPattern } from './regex'
import type { Assertion, TurnResult } from './schemas'

/** What the agent did in one turn of an attempt (a turn result before grading). */
export type TurnOutcome = Omit<TurnResult, 'assertions'>
type Graded = TurnResult['assertions'][number]

const quote = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s)

export const JUDGE_SYSTEM = [
  'You grade one answer of a customer-service agent against a rubric.',
  "Read the conversation, then the rubric, and judge only the agent's last answer.",
  'Reply with PASS or FAIL on the first line, then one short sentence saying why.',
].join(' ')

async function judge(
  engine: ChatEngine,
  agent: Pick<AgentRow, 'useLargeModel'>,
  turns: TurnOutcome[],
  rubric: string,
): Promise<Graded> {
  if (engine.name === 'local')
    return { type: 'judge', passed: null, detail: 'Skipped: the local engine does not grade rubrics.' }
  const transcript = turns.map((t) => `Visitor: ${t.user}\nAgent: ${t.answer}`).join('\n')
  try {
    const reply = await engine.complete({
      system: JUDGE_SYSTEM,
      messages: [{ role: 'user', content: `Conversation:\n${transcript}\n\nRubric: ${rubric}` }],
      temperature: 0,
      largeModel: agent.useLargeModel,
    })
    const verdict = /^\W*(PASS|FAIL)\b/i.exec(reply.text)
    const why = reply.text
      .replace(/^\W*(PASS|FAIL)\b[\s:.-]*/i, '')
      .trim()
      .slice(0, 500)
    if (!verdict)
      return { type: 'judge', passed: false, detail: `The grader answered neither PASS nor FAIL: ${quote(reply.text)}` }
    return { type: 'judge', passed: verdict[1].toUpperCase() === 'PASS', detail: why || verdict[1].toUpperCase() }
  } catch (err) {
    return { type: 'judge', passed: false, detail: `The grader failed: ${err instanceof Error ? err.message : err}` }
  }
}

async function gradeOne(
  a: Assertion,
  turn: TurnOutcome,
  upTo: TurnOutcome[],
  engine: ChatEngine,
  agent: Pick<AgentRow, 'useLargeModel'>,
): Promise<Graded> {
  const answer = turn.answer
  switch (a.type) {
    case 'contains':
    case 'not_contains': {
      const found = answer.toLowerCase().includes(a.value.toLowerCase())
      return {
        type: a.type,
        passed: a.type === 'contains' ? found : !found,
        detail: `${quote(a.value)} is ${found ? '' : 'not '}in the answer.`,
      }
    }
    case 'regex': {
      const r = await matchPattern(a.pattern, answer)
      if ('error' in r) return { type: 'regex', passed: false, detail: r.error }
      return {
        type: 'regex',
        passed: r.matched,
        detail: `/${a.pattern}/ ${r.matched ? 'matches' : 'does not match'} the answer.`,
      }
    }
    case 'tool_called':
    case 'tool_not_called': {
      const called = turn.tools.some((t) => t.name === a.name)
      const names = turn.tools.map((t) => t.name)
      return {
        type: a.type,
        passed: a.type === 'tool_called' ? called : !called,
        detail: `${a.name} was ${called ? '' : 'not '}called (tools called: ${names.length ? names.join(', ') : 'none'}).`,
      }
    }
    case 'unanswered':
    case 'escalated': {
      const actual = turn[a.type]
      return { type: a.type, passed: actual === a.value, detail: `${a.type} is ${actual}, expected ${a.value}.` }
    }
    case 'judge':
      return judge(engine, agent, upTo, a.rubric)
  }
}

/** The turns with their assertions graded, in order (one assertion at a time: regexes share one worker). */
export async function gradeAttempt(
  outcomes: TurnOutcome[],
  expects: Assertion[][],
  engine: ChatEngine,
  agent: Pick<AgentRow, 'useLargeModel'>,
): Promise<TurnResult[]> {
  const out: TurnResult[] = []
  for (const [i, turn] of outcomes.entries()) {
    const assertions: Graded[] = []
    for (const a of expects[i] ?? []) assertions.push(await gradeOne(a, turn, outcomes.slice(0, i + 1), engine, agent))
    out.push({ ...turn, assertions })
  }
  return out
}
