// Shared by the bench scripts: start the built server (.output) as a child process on a free loopback
// port, wait until it listens and its health answers, and stop it again. Builds nothing: run
// `npx nitropack build` first (bench/run.mjs builds unless BENCH_SKIP_BUILD is set).
import { spawn } from 'node:child_process'
import { join, resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '..')
export const entry = join(root, '.output/server/index.mjs')
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Resolves the origin a child prints as "Listening on http://…" (node-server preset, or a bare server). */
export function listening(child) {
  return new Promise((res, rej) => {
    let out = ''
    child.stdout.on('data', (c) => {
      out += c
      const m = /Listening on (http:\/\/\S+)/.exec(out)
      if (m) res(m[1].replace(/\/$/, '').replace('[::]', '127.0.0.1'))
    })
    child.on('exit', (code) => rej(new Error(`server exited ${code}`)))
  })
}

/**
 * Starts the built server with SVC_DATA_DIR=dataDir and `env` on top of the caller's environment.
 * `spawnWith` lets a caller pin the process (taskset). Answers {origin, pid, stop}; stop waits for the
 * exit (at most 10 s).
 */
export async function startBuiltServer({
  dataDir,
  env = {},
  spawnWith = (args, opts) => spawn(process.execPath, args, opts),
}) {
  const child = spawnWith([entry], {
    cwd: dataDir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const origin = await listening(child)
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${origin}/v1/health`)).status === 200) break
    } catch {}
    if (i > 300) throw new Error('server not healthy in 60 s')
    await sleep(200)
  }
  child.stdout.resume()
  const stop = async () => {
    child.removeAllListeners('exit')
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(10_000)])
  }
  return { origin, pid: child.pid, stop }
}
