#!/usr/bin/env node
// Several instances of the built server on one PostgreSQL and one Redis, behind a small round-robin proxy
// in this process: the multi-instance set-up for development, tests, the load script and the chaos test.
// `npm run cluster -- --instances 2 [--port 8080]`; as a library, startCluster() (types in cluster.d.mts).
import { spawn } from 'node:child_process'
import { randomBytes, createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ENTRY, spawnServer, stopChild } from './spawn-server.mjs'

/** Methods a proxy may send twice: a reset before any response byte cannot have done harm twice. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own, never forwarded. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
])

export function freePort() {
  return new Promise((done, fail) => {
    const s = net.createServer()
    s.once('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => done(port))
    })
  })
}

/** A throwaway redis-server on a free loopback port without persistence; stopped by the returned stop(). */
export async function startRedis({ log } = {}) {
  const port = await freePort()
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const out = []
  child.stdout.on('data', (c) => out.push(c.toString()))
  child.stderr.on('data', (c) => out.push(c.toString()))
  await new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`redis-server did not start in 10 s:\n${out.join('')}`)), 10_000)
    child.once('error', (err) => {
      clearTimeout(timer)
      fail(
        new Error(
          `cannot start redis-server (${err.message}); install it (apt-get install redis-server) or set REDIS_URL`,
        ),
      )
    })
    const onEarlyExit = (code) => {
      clearTimeout(timer)
      fail(new Error(`redis-server exited (${code}):\n${out.join('')}`))
    }
    child.once('exit', onEarlyExit)
    const onData = () => {
      if (!/Ready to accept connections/.test(out.join(''))) return
      clearTimeout(timer)
      child.stdout.off('data', onData)
      child.off('exit', onEarlyExit)
      ready()
    }
    child.stdout.on('data', onData)
  })
  log?.(`[cluster] redis-server on 127.0.0.1:${port}`)
  return { url: `redis://127.0.0.1:${port}`, child, stop: () => stopChild(child, 'SIGTERM') }
}

const isLoopback = (ip) => !!ip && (ip.startsWith('127.') || ip === '::1' || ip.startsWith('::ffff:127.'))
const unmapped = (ip) => (ip?.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip)

/**
 * X-Forwarded-For as a proxy appends it: the hops a loopback peer (another local proxy, a test that
 * simulates clients) already wrote are kept, anyone else's are dropped, and the peer is appended, so the
 * instance (which trusts the proxy through SVC_TRUSTED_PROXIES) sees the real client as the first hop.
 */
function forwardedFor(req) {
  const peer = unmapped(req.socket.remoteAddress) ?? 'unknown'
  const prior = req.headers['x-forwarded-for']
  const kept =
    isLoopback(req.socket.remoteAddress) && prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ` : ''
  return `${kept}${peer}`
}

function forwardHeaders(req, { upgrade = false } = {}) {
  const headers = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (HOP.has(name) && !(upgrade && (name === 'connection' || name === 'upgrade'))) continue
    headers[name] = value
  }
  headers['x-forwarded-for'] = forwardedFor(req)
  if (!(isLoopback(req.socket.remoteAddress) && req.headers['x-forwarded-proto'])) headers['x-forwarded-proto'] = 'http'
  if (!req.headers['x-forwarded-host'] && req.headers.host) headers['x-forwarded-host'] = req.headers.host
  return headers
}

/** Opens a TCP connection to the node; rejects on refusal before anything was sent. */
function connectTo(node) {
  const { hostname, port } = new URL(node.origin)
  return new Promise((done, fail) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    socket.once('connect', () => {
      socket.removeListener('error', fail)
      done(socket)
    })
    socket.once('error', fail)
  })
}

/** The round-robin proxy over `nodes` (each with state 'up' | 'draining' | 'down' | 'starting'). */
function createProxy(nodes, log) {
  let next = 0
  const pick = (tried) => {
    const n = nodes.length
    for (let k = 0; k < n; k++) {
      const node = nodes[(next + k) % n]
      if (node.state === 'up' && !tried.has(node)) {
        next = (next + k + 1) % n
        return node
      }
    }
    return undefined
  }
  const stats = { requests: 0, retries: 0, failures: 0 }

  const server = http.createServer(async (req, res) => {
    stats.requests++
    const tried = new Set()
    const headers = forwardHeaders(req)
    const bodyless = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined
    for (;;) {
      const node = pick(tried)
      if (!node) {
        stats.failures++
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'application/json' })
          res.end(
            JSON.stringify({
              error: { status: 502, code: 'no_instance', message: 'No instance is up behind the proxy' },
            }),
          )
        } else res.destroy()
        return
      }
      tried.add(node)
      let socket
      try {
        socket = await connectTo(node)
      } catch {
        // Refused: nothing was sent, so another instance may take the request as it is.
        stats.retries++
        node.state = node.state === 'up' ? 'down' : node.state
        continue
      }
      const outcome = await new Promise((settle) => {
        let responded = false
        const upstream = http.request({
          method: req.method,
          path: req.url,
          headers,
          createConnection: () => socket,
        })
        upstream.on('response', (up) => {
          responded = true
          const out = { ...up.headers }
          for (const h of HOP) delete out[h]
          res.writeHead(up.statusCode ?? 502, up.statusMessage, out)
          up.pipe(res)
          up.on('end', () => settle('done'))
          up.on('aborted', () => res.destroy())
          up.on('error', () => {
            res.destroy()
            settle('done')
          })
        })
        upstream.on('error', (err) => {
          if (!responded && bodyless && IDEMPOTENT.has(req.method ?? '') && !res.headersSent && !res.destroyed)
            return settle({ retry: err })
          if (!res.headersSent) {
            res.writeHead(502, { 'content-type': 'application/json' })
            res.end(
              JSON.stringify({
                error: { status: 502, code: 'bad_gateway', message: `Instance failed: ${err.message}` },
              }),
            )
          } else res.destroy()
          stats.failures++
          settle('done')
        })
        res.on('close', () => {
          if (!res.writableFinished) upstream.destroy()
          settle('done')
        })
        req.pipe(upstream)
      })
      if (outcome === 'done') return
      stats.retries++
    }
  })

  // WebSocket (and any other) upgrades: a raw TCP tunnel to one instance after re-sending the request head.
  server.on('upgrade', async (req, clientSocket, head) => {
    const tried = new Set()
    clientSocket.on('error', () => {})
    for (;;) {
      const node = pick(tried)
      if (!node) {
        clientSocket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
        return
      }
      tried.add(node)
      let up
      try {
        up = await connectTo(node)
      } catch {
        continue
      }
      const headers = forwardHeaders(req, { upgrade: true })
      const lines = [`${req.method} ${req.url} HTTP/1.1`]
      for (const [name, value] of Object.entries(headers))
        for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`)
      up.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head?.length) up.write(head)
      up.on('error', () => clientSocket.destroy())
      clientSocket.on('error', () => up.destroy())
      up.pipe(clientSocket)
      clientSocket.pipe(up)
      return
    }
  })
  server.on('clientError', (_err, socket) => socket.destroy())
  log?.('[cluster] proxy ready')
  return { server, stats }
}

/**
 * Starts `instances` servers on one PostgreSQL (`databaseUrl`, default DATABASE_URL) and one Redis
 * (`redisUrl`, else a redis-server of its own), with a shared blob directory and one job-queue schema,
 * behind a round-robin proxy on 127.0.0.1:`proxyPort` (0: a free port).
 */
export async function startCluster({
  instances = 2,
  databaseUrl = process.env.DATABASE_URL,
  redisUrl,
  env = {},
  proxyPort = 0,
  masterKey,
  dataDirBase,
  log,
  entry = ENTRY,
} = {}) {
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new Error(
      'startCluster needs PostgreSQL: set DATABASE_URL=postgres://… (the embedded PGlite belongs to one process and cannot be shared by several instances)',
    )
  if (!existsSync(entry)) throw new Error(`no built server at ${entry}: run npm run build first`)
  const ownBase = !dataDirBase
  const base = dataDirBase ? resolve(dataDirBase) : mkdtempSync(join(tmpdir(), 'svc-cluster-'))
  mkdirSync(base, { recursive: true })
  // The master key and secret are the cluster's, kept in its base dir so a restarted cluster keeps its keys
  // and its tokens valid; every instance must sign and verify alike.
  const keep = (name, make) => {
    const file = join(base, name)
    if (existsSync(file)) return readFileSync(file, 'utf8').trim()
    const value = make()
    writeFileSync(file, value, { mode: 0o600 })
    return value
  }
  const key =
    masterKey ?? env.SVC_MASTER_KEY ?? keep('master-key', () => `svc_mk_live_${randomBytes(36).toString('base64url')}`)
  const secret = env.SVC_SECRET ?? keep('secret', () => randomBytes(32).toString('base64url'))
  let redis
  if (!redisUrl) redis = await startRedis({ log })
  const redisAt = redisUrl ?? redis.url
  const blobDir = join(base, 'blobs')
  mkdirSync(blobDir, { recursive: true })
  // One queue for all instances (each must be able to take over another's jobs), and not the schema of
  // another cluster or test server on the same database: keyed by the base dir.
  const queueSchema = env.SVC_QUEUE_SCHEMA ?? `pgboss_c${createHash('sha256').update(base).digest('hex').slice(0, 12)}`
  const nodeEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisAt,
    SVC_BLOB_DIR: blobDir,
    SVC_QUEUE_SCHEMA: queueSchema,
    // kill() takes a node out of the rotation before its SIGTERM, but a request the proxy had just sent
    // may not have had its head parsed yet, and Nitro's shutdown destroys such a connection as idle (a
    // reset POST in a CI rolling restart). The delay keeps the port serving until those are in.
    SVC_SHUTDOWN_DELAY_SECONDS: '1',
    ...env,
    SVC_MASTER_KEY: key,
    SVC_SECRET: secret,
  }
  for (const [k, v] of Object.entries(nodeEnv)) if (v === undefined) delete nodeEnv[k]

  const nodes = []
  const startNode = async (index) => {
    const dataDir = join(base, `node-${index}`)
    mkdirSync(dataDir, { recursive: true })
    const node = nodes[index] ?? { index, origin: '', child: undefined, pid: 0, logs: [], state: 'starting' }
    nodes[index] = node
    node.state = 'starting'
    const started = await spawnServer({ env: { ...nodeEnv, SVC_DATA_DIR: dataDir }, cwd: dataDir, entry })
    node.origin = started.origin
    node.child = started.child
    node.pid = started.child.pid
    node.logs.push(...started.logs)
    started.child.stdout.on('data', (c) => node.logs.push(c.toString()))
    started.child.stderr.on('data', (c) => node.logs.push(c.toString()))
    started.child.once('exit', (code, signal) => {
      node.state = 'down'
      log?.(`[cluster] node ${index} (pid ${node.pid}) exited ${code ?? signal}`)
    })
    node.state = 'up'
    log?.(`[cluster] node ${index}: ${node.origin} (pid ${node.pid})`)
    return node
  }
  let proxy
  try {
    // One at a time: the first boot migrates the database and creates the queue schema.
    await startNode(0)
    await Promise.all(Array.from({ length: instances - 1 }, (_, i) => startNode(i + 1)))
    proxy = createProxy(nodes, log)
    await new Promise((done, fail) => {
      proxy.server.once('error', fail)
      proxy.server.listen(proxyPort, '127.0.0.1', done)
    })
  } catch (err) {
    await Promise.all(nodes.filter((n) => n?.child).map((n) => stopChild(n.child, 'SIGKILL')))
    await redis?.stop()
    if (ownBase) rmSync(base, { recursive: true, force: true })
    throw err
  }
  const url = `http://127.0.0.1:${proxy.server.address().port}`
  log?.(`[cluster] proxy: ${url}`)

  // A node that stops answering its health check (or says 503 while draining) leaves the rotation until
  // it answers 200 again; one the cluster itself signalled stays out until restart().
  const health = setInterval(async () => {
    for (const node of nodes) {
      const gone = !node.child || node.child.exitCode !== null || node.child.signalCode
      if (node.state === 'starting' || node.state === 'draining' || gone) continue
      try {
        const r = await fetch(`${node.origin}/v1/health`, { signal: AbortSignal.timeout(2000) })
        await r.arrayBuffer()
        node.state = r.status === 200 ? 'up' : 'down'
      } catch {
        node.state = 'down'
      }
    }
  }, 1000)
  health.unref()

  const kill = async (i, signal = 'SIGKILL') => {
    const node = nodes[i]
    if (!node?.child) throw new Error(`no node ${i}`)
    // Out of the rotation before the signal, so the proxy sends it nothing new while it drains.
    node.state = 'draining'
    return stopChild(node.child, signal)
  }
  const restart = async (i) => {
    const node = nodes[i]
    if (!node) throw new Error(`no node ${i}`)
    if (node.child && node.child.exitCode === null && !node.child.signalCode) await kill(i, 'SIGTERM')
    await startNode(i)
    return node
  }
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    clearInterval(health)
    for (const node of nodes) node.state = 'draining'
    await Promise.all(nodes.filter((n) => n.child).map((n) => stopChild(n.child, 'SIGTERM')))
    proxy.server.closeAllConnections?.()
    await new Promise((done) => proxy.server.close(() => done()))
    await redis?.stop()
    if (ownBase) rmSync(base, { recursive: true, force: true })
  }
  return { url, masterKey: key, redisUrl: redisAt, nodes, stats: proxy.stats, dataDirBase: base, kill, restart, stop }
}

function parseArgs(argv) {
  const opts = { instances: 2, port: 8080 }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${a} needs a value`)
      return v
    }
    if (a === '--instances' || a === '-n') opts.instances = Number(value())
    else if (a === '--port' || a === '-p') opts.port = Number(value())
    else if (a === '--data-dir') opts.dataDir = value()
    else if (a === '--help' || a === '-h') opts.help = true
    else throw new Error(`unknown option ${a}`)
  }
  if (!Number.isInteger(opts.instances) || opts.instances < 1 || opts.instances > 16)
    throw new Error('--instances is a whole number from 1 to 16')
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535)
    throw new Error('--port is a TCP port (0: any free one)')
  return opts
}

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error(`cluster: ${err.message}`)
    process.exit(2)
  }
  if (opts.help) {
    console.log(
      'npm run cluster -- [--instances N (2)] [--port P (8080)] [--data-dir DIR (.data/cluster)]\n' +
        'Needs DATABASE_URL=postgres://…; uses REDIS_URL when set, else starts redis-server on a free port.',
    )
    return
  }
  const root = resolve(import.meta.dirname, '..')
  let cluster
  try {
    cluster = await startCluster({
      instances: opts.instances,
      proxyPort: opts.port,
      redisUrl: process.env.REDIS_URL || undefined,
      dataDirBase: opts.dataDir ?? join(root, '.data/cluster'),
      log: (line) => console.log(line),
    })
  } catch (err) {
    console.error(`cluster: ${err.message}`)
    process.exit(1)
  }
  console.log(`\nproxy  ${cluster.url}/v1`)
  for (const n of cluster.nodes) console.log(`node ${n.index} ${n.origin}/v1  pid ${n.pid}`)
  console.log(`redis  ${cluster.redisUrl}\nmaster key in ${join(cluster.dataDirBase, 'master-key')}\nCtrl-C stops.`)
  let stopping = false
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      if (stopping) return
      stopping = true
      console.log('\n[cluster] stopping…')
      cluster.stop().then(() => process.exit(0))
    })
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main()
