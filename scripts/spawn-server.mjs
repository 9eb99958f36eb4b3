// Starts one built server (.output/server/index.mjs) as a child process and waits until it serves: the
// one spawner behind the test helper (test/helpers/server.ts) and the cluster (scripts/cluster.mjs).
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'

export const ENTRY = resolve(import.meta.dirname, '../.output/server/index.mjs')

/**
 * Spawns the server with exactly `env` (the caller merges process.env) in `cwd`, resolves once it listens
 * and /v1/health answers 200 (listening precedes readiness: boot is awaited per request).
 */
export async function spawnServer({ env, cwd, entry = ENTRY, timeoutMs = 60_000, onLog }) {
  // Started from its data dir, not the repository: .output must boot from any working directory.
  const child = spawn(process.execPath, [entry], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const logs = []
  const record = (chunk) => {
    const text = chunk.toString()
    logs.push(text)
    onLog?.(text)
  }
  child.stderr.on('data', record)
  const origin = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`server did not listen in ${timeoutMs / 1000} s:\n${logs.join('')}`))
    }, timeoutMs)
    const onExit = (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${code ?? signal}):\n${logs.join('')}`))
    }
    child.stdout.on('data', (chunk) => {
      record(chunk)
      const m = /Listening on (http:\/\/[^\s]+)/.exec(logs.join(''))
      if (m) {
        clearTimeout(timer)
        child.off('exit', onExit)
        resolveUrl(m[1].replace(/\/$/, '').replace('[::]', '127.0.0.1'))
      }
    })
    child.once('exit', onExit)
  })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const r = await fetch(`${origin}/v1/health`)
      if (r.status === 200) break
    } catch {}
    if (child.exitCode !== null || child.signalCode) throw new Error(`server exited while booting:\n${logs.join('')}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server not healthy in ${timeoutMs / 1000} s:\n${logs.join('')}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return { origin, child, logs, stop: (signal = 'SIGTERM') => stopChild(child, signal) }
}

/** Sends `signal` (unless the child already exited) and resolves with its exit code or signal. */
export function stopChild(child, signal = 'SIGTERM') {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode) return done({ code: child.exitCode, signal: child.signalCode })
    child.once('exit', (code, sig) => done({ code, signal: sig }))
    child.kill(signal)
  })
}
