// Shapes of the agent test routes (decisions "Agent tests", "Test runs"): tests of an agent (tst_<n>), each a
// script of visitor turns with assertions on the agent's answers, and runs of them (run_<n>) against the
// active prompts or a candidate prompt version. Lengths are bounded here, before any pattern is compiled.
import * as v from 'valibot'
import { Cursor, Id, Limit } from '~/lib/schemas'

export const MAX_TESTS_PER_AGENT = 100
export const MAX_TURNS = 20
/** Assertions on one turn: each regex is compiled when the test is written, so they are few. */
export const MAX_ASSERTIONS = 10
/** A visitor turn: the longest utterance a call transcribes (voice-loop MAX_TEXT), for every surface alike. */
export const MAX_USER_TEXT = 2_000
export const MAX_PATTERN = 200
export const MAX_RUBRIC = 1_000
export const MAX_VALUE = 500
export const MAX_REPEAT = 10

export const SURFACES = ['chat', 'phone', 'voice_chat'] as const
export type TestSurface = (typeof SURFACES)[number]
export const ASSERTION_TYPES = [
  'contains',
  'not_contains',
  'regex',
  'tool_called',
  'tool_not_called',
  'unanswered',
  'escalated',
  'judge',
] as const
export type AssertionType = (typeof ASSERTION_TYPES)[number]

const Name = v.pipe(
  v.string('name must be a string.'),
  v.trim(),
  v.minLength(1, 'name must not be empty.'),
  v.maxLength(200, 'name is at most 200 characters.'),
)
const Surface = v.picklist(SURFACES, `surface is one of ${SURFACES.join(', ')}.`)
const Text = (what: string, max: number) =>
  v.pipe(
    v.string(`${what} must be a string.`),
    v.maxLength(max, `${what} is at most ${max} characters.`),
    v.check((s) => s.trim().length > 0, `${what} must not be empty.`),
  )
const Flag = v.boolean('value must be true or false.')

// Discriminated by `type`; each kind carries exactly its own key (strict objects: anything else is unsupported_field).
export const Assertion = v.variant(
  'type',
  [
    v.strictObject({
      type: v.literal('contains'),
      value: v.pipe(Text('value', MAX_VALUE), v.description('Found in the answer, case-insensitively.')),
    }),
    v.strictObject({
      type: v.literal('not_contains'),
      value: v.pipe(Text('value', MAX_VALUE), v.description('Absent from the answer, case-insensitively.')),
    }),
    v.strictObject({
      type: v.literal('regex'),
      pattern: v.pipe(
        Text('pattern', MAX_PATTERN),
        v.description(
          'RE2 syntax (linear-time: no backreferences or lookaround), found anywhere in the answer; (?i) for case-insensitive.',
        ),
      ),
    }),
    v.strictObject({ type: v.literal('tool_called'), name: Text('name', 100) }),
    v.strictObject({ type: v.literal('tool_not_called'), name: Text('name', 100) }),
    v.strictObject({ type: v.literal('unanswered'), value: Flag }),
    v.strictObject({ type: v.literal('escalated'), value: Flag }),
    v.strictObject({
      type: v.literal('judge'),
      rubric: v.pipe(
        Text('rubric', MAX_RUBRIC),
        v.description("Graded by the agent's chat engine; skipped with the local engine."),
      ),
    }),
  ],
  `type is one of ${ASSERTION_TYPES.join(', ')}.`,
)
export type Assertion = v.InferOutput<typeof Assertion>

const Turn = v.strictObject({
  user: v.pipe(Text('user', MAX_USER_TEXT), v.description('What the visitor (or caller) says.')),
  expect: v.optional(
    v.pipe(
      v.array(Assertion, 'expect must be an array of assertions.'),
      v.maxLength(MAX_ASSERTIONS, `expect holds at most ${MAX_ASSERTIONS} assertions.`),
    ),
    [],
  ),
})
export type TestTurn = v.InferOutput<typeof Turn>

const Turns = v.pipe(
  v.array(Turn, 'turns must be an array of {user, expect}.'),
  v.minLength(1, 'turns holds at least one turn.'),
  v.maxLength(MAX_TURNS, `turns holds at most ${MAX_TURNS} turns.`),
)
const ReferenceAnswers = v.nullable(
  v.pipe(
    v.array(
      v.pipe(v.string('reference_answers holds strings.'), v.maxLength(10_000)),
      'reference_answers is an array.',
    ),
    v.maxLength(MAX_TURNS, `reference_answers holds at most ${MAX_TURNS} answers.`),
  ),
)

export const CreateTestBody = v.strictObject({
  name: Name,
  surface: v.optional(Surface, 'chat'),
  turns: Turns,
  reference_answers: v.optional(ReferenceAnswers, null),
})
export type CreateTestBody = v.InferOutput<typeof CreateTestBody>

export const PatchTestBody = v.strictObject({
  name: v.optional(Name),
  surface: v.optional(Surface),
  turns: v.optional(Turns),
  reference_answers: v.optional(ReferenceAnswers),
})
export type PatchTestBody = v.InferOutput<typeof PatchTestBody>

export const FromConversationBody = v.strictObject({
  conversation_id: v.pipe(
    v.string('conversation_id is required.'),
    v.regex(/^conv_[pud]\d{1,18}$/, 'conversation_id is conv_<p|u|d><n>.'),
  ),
})

export const TestParams = v.object({ tst: Id('tst') })
export const RunParams = v.object({ run: Id('run') })

export const TestListQuery = v.strictObject({ limit: Limit(100, 50), cursor: Cursor })
export type TestListQuery = v.InferOutput<typeof TestListQuery>

export const CreateRunBody = v.strictObject({
  test_ids: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.regex(/^tst_\d{1,18}$/, 'test_ids holds ids of the form tst_<n>.'))),
      v.minLength(1, 'test_ids names at least one test (omit it to run every test of the agent).'),
      v.maxLength(MAX_TESTS_PER_AGENT, `test_ids names at most ${MAX_TESTS_PER_AGENT} tests.`),
      v.check((ids) => new Set(ids).size === ids.length, 'test_ids names each test once.'),
    ),
  ),
  prompt_version: v.optional(
    v.pipe(
      v.string('prompt_version must be a string.'),
      v.minLength(1, 'prompt_version must not be empty.'),
      v.maxLength(80, 'prompt_version is at most 80 characters.'),
      v.description(
        'Label (or pv_<n> id) of a prompt version of the agent, used for the tests of its surface without activating it; default: the active prompts.',
      ),
    ),
  ),
  repeat: v.optional(
    v.pipe(
      v.number('repeat must be an integer from 1 to 10.'),
      v.integer('repeat must be an integer from 1 to 10.'),
      v.minValue(1, 'repeat must be an integer from 1 to 10.'),
      v.maxValue(MAX_REPEAT, 'repeat must be an integer from 1 to 10.'),
    ),
    1,
  ),
})
export type CreateRunBody = v.InferOutput<typeof CreateRunBody>

export const AgentTest = v.object({
  test_id: v.string(),
  agent_id: v.string(),
  name: v.string(),
  surface: v.picklist(SURFACES),
  turns: v.array(v.object({ user: v.string(), expect: v.array(Assertion) })),
  reference_answers: v.nullable(v.array(v.string())),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const RUN_STATUSES = ['queued', 'running', 'passed', 'failed', 'error'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]
export const ATTEMPT_STATUSES = ['passed', 'failed', 'skipped', 'error'] as const
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number]

const AssertionResult = v.object({
  type: v.picklist(ASSERTION_TYPES),
  passed: v.pipe(v.nullable(v.boolean()), v.description('null: skipped (a judge with the local engine)')),
  detail: v.string(),
})
const TurnResult = v.object({
  user: v.string(),
  answer: v.string(),
  tools: v.array(
    v.object({ name: v.string(), arguments: v.record(v.string(), v.unknown()), ok: v.boolean(), message: v.string() }),
  ),
  unanswered: v.boolean(),
  escalated: v.boolean(),
  assertions: v.array(AssertionResult),
})
export type TurnResult = v.InferOutput<typeof TurnResult>
export const AttemptResult = v.object({
  test_id: v.string(),
  attempt: v.number(),
  status: v.picklist(ATTEMPT_STATUSES),
  error: v.nullable(v.string()),
  turns: v.array(TurnResult),
})
export type AttemptResult = v.InferOutput<typeof AttemptResult>

const RunFields = {
  run_id: v.string(),
  agent_id: v.string(),
  prompt_version: v.nullable(v.string()),
  status: v.picklist(RUN_STATUSES),
  total: v.number(),
  passed: v.number(),
  failed: v.number(),
  skipped: v.number(),
  pass_rate: v.pipe(v.nullable(v.number()), v.description('passed / (passed + failed); null until one is graded')),
  error: v.nullable(v.string()),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  finished_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
}
export const TestRun = v.object({ ...RunFields, results: v.array(AttemptResult) })
export const TestRunSummary = v.object(RunFields)
