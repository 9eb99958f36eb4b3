// The regex matcher of agent tests, run inside a worker thread (regex.ts starts it with a memory limit and
// kills it past a match's deadline). Built as its own chunk (nitro.config.ts, #svc/regex-worker): it imports
// nothing but re2js.
import { parentPort } from 'node:worker_threads'
import { RE2JS } from 're2js'

export interface MatchRequest {
  id: number
  pattern: string
  text: string
}
export type MatchAnswer = { id: number; matched: boolean } | { id: number; error: string }

parentPort?.on('message', ({ id, pattern, text }: MatchRequest) => {
  let answer: MatchAnswer
  try {
    answer = { id, matched: RE2JS.compile(pattern).matcher(text).find() }
  } catch (err) {
    answer = { id, error: err instanceof Error ? err.message : String(err) }
  }
  parentPort?.postMessage(answer)
})
