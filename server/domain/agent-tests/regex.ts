// The regex assertion of agent tests runs on RE2 (re2js, a pure-JavaScript port): matching takes time linear
// in the answer, so `(a+)+$` cannot backtrack, and patterns RE2 cannot run in linear time (backreferences,
// lookaround) do not compile. Linear is not cheap, though: the cost is the answer's length times the
// pattern's program size, and a 200-character pattern such as `\w{1000}\d` takes seconds over 100,000
// characters. So patterns are checked when a test is written (length, syntax, program size; one compile at a
// time, the event loop given back between them), and answers are matched in a worker thread with a deadline,
// never on the event loop (decisions "Hostile input": GET /health answers within 1 s whatever runs).
import { Worker } from 'node:worker_threads'
import { RE2JS } from 're2js'
import workerUrl from '#svc/regex-worker'
import type { MatchAnswer } from './regex-worker'
import { Errors } from '~/lib/errors'

/** Beyond this many instructions a pattern is refused: it bounds a match's cost per character of answer. */
export const MAX_PROGRAM_SIZE = 2_000
/** A match that takes longer fails its assertion (and the worker is replaced). */
export const MATCH_DEADLINE_MS = 10_000

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Why `pattern` cannot be used, or null. */
export function patternProblem(pattern: string): string | null {
  try {
    const size = RE2JS.compile(pattern).programSize()
    if (size > MAX_PROGRAM_SIZE)
      return `The pattern is too complex (${size} RE2 instructions, at most ${MAX_PROGRAM_SIZE}); use smaller repeat counts.`
    return null
  } catch (err) {
    // RE2's own words: "invalid or unsupported Perl syntax: `(?=`", "invalid escape sequence: `\1`".
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp:\s*/, '') : 'invalid pattern'
    return `The pattern cannot run on a linear-time engine (RE2 syntax, no backreferences or lookaround): ${why.slice(0, 200)}.`
  }
}

/** 400 validation_error on the first unusable pattern; `at` lists each pattern with its field path. */
export async function checkPatterns(at: { field: string; pattern: string }[]): Promise<void> {
  for (const [i, p] of at.entries()) {
    if (i) await yieldToLoop()
    const problem = patternProblem(p.pattern)
    if (problem) throw Errors.validation(p.field, problem)
  }
}

interface Job {
  id: number
  pattern: string
  text: string
  resolve(r: MatchResult): void
}
export type MatchResult = { matched: boolean } | { error: string }
interface Thread {
  worker: Worker
  ready: Promise<void>
}

let thread: Thread | null = null
const queue: Job[] = []
/** The job in flight and the thread it went to. */
let busy: { job: Job; on: Thread; timer: NodeJS.Timeout } | null = null
let nextId = 1

function startThread(): Thread {
  const worker = new Worker(new URL(workerUrl), { resourceLimits: { maxOldGenerationSizeMb: 128 } })
  // An idle worker does not keep the process alive.
  worker.unref()
  // The worker is ready once it is online (it listens from its first line).
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('online', () => resolve())
    worker.once('error', reject)
  })
  const self: Thread = { worker, ready }
  worker.on('message', (m: MatchAnswer) => {
    if (busy?.on === self && m.id === busy.job.id) finish('error' in m ? { error: m.error } : { matched: m.matched })
  })
  const lost = (why: string) => {
    if (thread === self) thread = null
    if (busy?.on === self) finish({ error: why })
  }
  worker.on('error', (err) => lost(`The regex worker failed: ${err.message}`))
  worker.on('exit', () => lost('The regex worker stopped.'))
  return self
}

/** Answers the job in flight and starts the next one. */
function finish(r: MatchResult) {
  if (!busy) return
  const { job, timer } = busy
  busy = null
  clearTimeout(timer)
  job.resolve(r)
  pump()
}

function pump() {
  if (busy || !queue.length) return
  const job = queue.shift()!
  thread ??= startThread()
  const on = thread
  const timer = setTimeout(() => {
    if (busy?.job !== job) return
    // The only way to stop a match in flight: the thread goes, a new one takes the next job.
    if (thread === on) thread = null
    finish({ error: `The pattern took longer than ${MATCH_DEADLINE_MS / 1000} s on this answer.` })
    void on.worker.terminate()
  }, MATCH_DEADLINE_MS)
  timer.unref()
  busy = { job, on, timer }
  on.ready.then(
    () => {
      if (busy?.job === job) on.worker.postMessage({ id: job.id, pattern: job.pattern, text: job.text })
    },
    (err: Error) => {
      if (thread === on) thread = null
      if (busy?.job === job) finish({ error: `The regex worker could not start: ${err.message}` })
    },
  )
}

/** Whether `pattern` (already checked by checkPatterns) is found in `text`; matched off the event loop, one at a time. */
export function matchPattern(pattern: string, text: string): Promise<MatchResult> {
  return new Promise((resolve) => {
    queue.push({ id: nextId++, pattern, text, resolve })
    pump()
  })
}
