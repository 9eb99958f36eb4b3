// Shared by the bench scripts: start the built server (.output) as a child process on a free loopback
// port, wait until it listens and its health answers, and stop it again. Builds nothing: run
// `npx nitropack build` first (bench/run.mjs builds unless BENCH_SKIP_BUILD is set).
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
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

/**
 * A loopback OTLP/HTTP receiver for BENCH_OTLP=1 (decisions "Tracing"): the server under test exports its spans
 * here, and the sink counts the posts and spans it accepted.
 */
export async function startOtlpSink() {
  const sink = { url: '', posts: 0, spans: 0, close: () => {} }
  const http = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      sink.posts++
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      for (const rs of doc.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) sink.spans += ss.spans?.length ?? 0
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise((ok) => http.listen(0, '127.0.0.1', ok))
  sink.url = `http://127.0.0.1:${http.address().port}`
  sink.close = () => http.close()
  return sink
}
