#!/usr/bin/env node
// `npm run bench:idle`: the two figures of an unloaded server (issue 36), on the engine DATABASE_URL selects.
//   boot: a fresh data dir (and, on PostgreSQL, a fresh queue schema on the given, migrated or empty,
//         database): wall time from spawn to the first 200 of /v1/health, and the CPU the process spent.
//   idle: after boot settles (IDLE_SETTLE_SECONDS, 10), the process's CPU time (utime + stime from
//         /proc/<pid>/stat) over IDLE_SECONDS (60) with no requests, as a share of one core.
// Exported for bench/run.mjs; run alone it prints both and a JSON line.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { entry, sleep, startBuiltServer } from './_server.mjs'

const TICKS = 100 // USER_HZ on Linux

/** utime + stime of a process, in seconds (Linux /proc). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / TICKS
}

/**
 * Boots the built server on a fresh data dir and measures the boot; then, unless idleSeconds is 0, the idle
 * share over idleSeconds after settleSeconds. Answers { bootSeconds, bootCpuSeconds, idleShare, idleSeconds }.
 */
export async function measureIdleBoot({ idleSeconds = 60, settleSeconds = 10, env = {}, spawnWith } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-idle-'))
  const started = process.hrtime.bigint()
  const svc = await startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: 'svc_mk_live_' + randomBytes(36).toString('base64url'),
      SVC_SECRET: randomBytes(32).toString('base64url'),
      // On PostgreSQL a queue of its own, so that the boot creates pg-boss's schema as a fresh install does.
      ...(process.env.DATABASE_URL ? { SVC_QUEUE_SCHEMA: `pgboss_idle_${randomBytes(4).toString('hex')}` } : {}),
      ...env,
    },
    spawnWith,
  })
  const bootSeconds = Number(process.hrtime.bigint() - started) / 1e9
  try {
    const bootCpuSeconds = cpuSeconds(svc.pid)
    let idleShare = null
    if (idleSeconds > 0) {
      await sleep(settleSeconds * 1000)
      const t0 = process.hrtime.bigint()
      const c0 = cpuSeconds(svc.pid)
      await sleep(idleSeconds * 1000)
      const c1 = cpuSeconds(svc.pid)
      idleShare = (c1 - c0) / (Number(process.hrtime.bigint() - t0) / 1e9)
    }
    return { bootSeconds, bootCpuSeconds, idleShare, idleSeconds }
  } finally {
    await svc.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!entry) throw new Error('no build')
  const r = await measureIdleBoot({
    idleSeconds: Number(process.env.IDLE_SECONDS ?? 60),
    settleSeconds: Number(process.env.IDLE_SETTLE_SECONDS ?? 10),
  })
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(
    `engine ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}: boot ${r.bootSeconds.toFixed(1)} s (${r.bootCpuSeconds.toFixed(1)} s CPU), idle ${r.idleShare === null ? '—' : `${(r.idleShare * 100).toFixed(2)} % of a core over ${r.idleSeconds} s`} (load ${load})`,
  )
  console.log(JSON.stringify(r))
}
