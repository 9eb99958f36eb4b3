// An idle server is not polling (issue 36: an idle instance within 2 % of a core). CPU time on a shared machine
// is too noisy to assert, so this counts what wakes the process instead: the built server runs with a preload
// (test/helpers/idle-counter.mjs) that counts every timer callback, and on PGlite every statement, over 10 s with
// no request, after the start-up windows (reaper, reconciliation) have passed.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer, type TestServer } from '../helpers/server'
import { verifies } from '../requirements'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const WINDOW_S = 10

describe('an idle server', () => {
  let server: TestServer | undefined
  let own: OwnDatabase | undefined
  afterAll(async () => {
    await server?.stop()
    await own?.drop()
  })

  it('wakes on a few timers in 10 s and repeats no statement of its own', async () => {
    verifies('ops.idle-wakeups')
    own = await ownDatabase('idle')
    const file = join(tmpdir(), `svc-idle-count-${randomBytes(4).toString('hex')}.json`)
    const preload = pathToFileURL(resolve(import.meta.dirname, '../helpers/idle-counter.mjs')).href
    server = await startServer({
      env: {
        ...own.env,
        NODE_OPTIONS: `--import ${preload}`,
        SVC_IDLE_COUNT_FILE: file,
        // Start-up windows of 2 × (2 + 5) s: the reaper and, on PGlite, the reconciliation are past them below.
        SVC_CALL_STALE_SECONDS: '2',
      },
    })
    const pid = server.child.pid as number
    await sleep(16_000)
    process.kill(pid, 'SIGUSR2')
    await sleep(WINDOW_S * 1000)
    process.kill(pid, 'SIGUSR2')
    await sleep(500)
    const { timers, statements } = JSON.parse(readFileSync(file, 'utf8')) as {
      timers: Record<string, number>
      statements: Record<string, number>
    }
    const fires = Object.values(timers).reduce((a, b) => a + b, 0)
    const report = JSON.stringify({ timers, statements }, null, 1)
    const run = Object.values(statements).reduce((a, b) => a + b, 0)
    console.log(`[idle-wakeups] ${fires} timer callbacks, ${run} statements in ${WINDOW_S} s`)
    // Before issue 36's idle work: ~40 audit-writer ticks, ~20 webhook pump polls (SVC_JOB_POLL_SECONDS 0.5 in
    // tests), 5 heartbeats; on PostgreSQL also the job probe, every 0.5 s here. Now: the config poll (2), the
    // heartbeat on PostgreSQL (5), a backstop or two (pump, probe, reaper), the engine's and pg-boss's own
    // timers, and a job's when a minute's sweeps fall in the window.
    // After "Issue 36: idle, the minute sweeps" (own cron, sweeps in the process, config by notification):
    // 3–4 on PGlite, ~12 on PostgreSQL (heartbeat every 2 s with SVC_CALL_STALE_SECONDS 2, probe, reaper).
    expect(fires, report).toBeLessThanOrEqual(16)
    // No loop of the application's own runs more often than every ~3 s (the config poll, every 5 s, may run
    // three times in a window of 10 s). The queue's statements (pg-boss's and the
    // waker's, all naming the queue schema) are left out: a minute's sweeps falling in the window run a fetch,
    // a stamp and a completion per queue.
    const repeated = Object.entries(statements).filter(
      ([text, n]) => n > 3 && !text.includes(server!.queueSchema + '.'),
    )
    expect(repeated, report).toEqual([])
    if (!process.env.DATABASE_URL) {
      expect(Object.keys(statements).length, report).toBeGreaterThan(0)
      // Every statement, the queue's too: the sweeps no longer pass through the queue on PGlite, so a minute's
      // slot in the window adds its sweeps' own statements only (~12), not a send, fetches, a stamp and a
      // completion each (~40 before).
      expect(run, report).toBeLessThanOrEqual(25)
    }
  }, 90_000)
})
