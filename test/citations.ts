// Citations as they run: verifies() appends the ids to a file of this run, so a citation in a skipped
// test, or one that runs on only one engine, does not count on the run that skips it. CI runs `npm test`
// once per engine; each run must execute a citation of every rule, so a rule counts only where it is
// proven on both engines.
//
// One directory per vitest run, named after the main process: the workers are its children (the forks
// pool), the global setup runs in it.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const citationsDir = (mainPid: number) => join(tmpdir(), `svc-citations-${mainPid}`)

export function recordCitations(ids: readonly string[]) {
  const dir = citationsDir(process.ppid)
  mkdirSync(dir, { recursive: true })
  appendFileSync(join(dir, `${process.pid}.txt`), `${ids.join('\n')}\n`)
}

/** The ids cited by tests that ran in the vitest run of this main process. */
export function executedCitations(mainPid = process.pid): Set<string> {
  const dir = citationsDir(mainPid)
  let files: string[] = []
  try {
    files = readdirSync(dir)
  } catch {}
  return new Set(files.flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean)))
}
