import type { ChildProcess } from 'node:child_process'
import type { Exit } from './spawn-server.mjs'

export interface ClusterNode {
  index: number
  /** The instance's own origin, e.g. http://127.0.0.1:40123 (a fresh port after restart()). */
  origin: string
  child: ChildProcess
  pid: number
  /** Everything the instance printed, across restarts. */
  logs: string[]
  /** The proxy's view: only 'up' nodes get requests. */
  state: 'starting' | 'up' | 'draining' | 'down'
}

export interface Cluster {
  /** The proxy's origin, e.g. http://127.0.0.1:PORT (API under /v1). */
  url: string
  masterKey: string
  redisUrl: string
  nodes: ClusterNode[]
  /** Proxy counters: requests seen, retries on another node, requests answered 502 by the proxy. */
  stats: { requests: number; retries: number; failures: number }
  /** The directory holding each node's data dir, the shared blobs, the master key and secret. */
  dataDirBase: string
  /** Takes node i out of the rotation, signals it, resolves when it has exited (with its exit). */
  kill(i: number, signal?: NodeJS.Signals): Promise<Exit>
  /** Starts node i again (SIGTERMing it first if it still runs) on a fresh port; resolves when healthy. */
  restart(i: number): Promise<ClusterNode>
  /** SIGTERMs every node, closes the proxy, stops the cluster's own redis-server, removes a temporary base. */
  stop(): Promise<void>
}

export declare function startCluster(opts?: {
  instances?: number
  /** postgres://… (default DATABASE_URL); PGlite is refused. */
  databaseUrl?: string
  /** A Redis to share; without it the cluster starts redis-server on a free port and stops it on stop(). */
  redisUrl?: string
  /** Extra environment for every instance (SVC_RATE_LIMITS, SVC_JOB_POLL_SECONDS, SVC_QUEUE_SCHEMA…). */
  env?: Record<string, string | undefined>
  proxyPort?: number
  masterKey?: string
  /** Default: a new temporary directory, removed by stop(). */
  dataDirBase?: string
  log?: (line: string) => void
  entry?: string
}): Promise<Cluster>

export declare function startRedis(opts?: {
  log?: (line: string) => void
}): Promise<{ url: string; child: ChildProcess; stop(): Promise<Exit> }>

export declare function freePort(): Promise<number>
