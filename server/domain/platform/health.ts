// Health answers from a database probe at most PROBE_FRESH_MS old: one probe per second however many
// callers ask (single flight), bounded by PROBE_TIMEOUT_MS, so a dead database reads `down` within 2 s
// and a busy health check costs the database nothing. The other components follow what they depend on:
// transcripts on the database, summaries and webhooks on the job queue, media on the blob store.
import * as v from 'valibot'
import { isDraining } from '~/kit/drain'
import type { Runtime } from '~/kit/runtime'

export const VERSION = '1.0.0'

const ComponentStatus = v.picklist(['ok', 'degraded', 'down'])
export const Health = v.object({
  status: ComponentStatus,
  version: v.string(),
  time: v.pipe(v.string(), v.isoTimestamp()),
  components: v.object({
    api: ComponentStatus,
    db: ComponentStatus,
    transcripts: ComponentStatus,
    summaries: ComponentStatus,
    webhooks: ComponentStatus,
    media: ComponentStatus,
    jobs: ComponentStatus,
  }),
})
export type Health = v.InferOutput<typeof Health>

export const PROBE_FRESH_MS = 1000
export const PROBE_TIMEOUT_MS = 900

type DbState = 'ok' | 'down'
interface Probe {
  at: number
  state: Promise<DbState>
}
const probes = new WeakMap<Runtime['database'], Probe>()

/** The database's state from a probe started at most PROBE_FRESH_MS ago (joined while it runs). */
export function probeDatabase(database: Runtime['database'], now = Date.now()): Promise<DbState> {
  const last = probes.get(database)
  if (last && now - last.at < PROBE_FRESH_MS) return last.state
  const state = database.ping(PROBE_TIMEOUT_MS).then(
    () => 'ok' as const,
    () => 'down' as const,
  )
  probes.set(database, { at: now, state })
  return state
}

export async function checkHealth(runtime: Runtime): Promise<Health> {
  const db = await probeDatabase(runtime.database)
  const jobs = db === 'down' ? 'down' : await runtime.queue.state()
  // Webhooks: the queue, and whether this process's delivery pump failed a pass in the last minute.
  const webhooks = jobs !== 'ok' ? jobs : runtime.webhooks.state()
  // A draining process (SIGTERM) is down for a balancer: its API takes no new work, though it still answers.
  const api = isDraining() ? 'down' : 'ok'
  const components = { api, db, transcripts: db, summaries: jobs, webhooks, media: 'ok', jobs } as const
  const values = Object.values(components) as string[]
  const status = db === 'down' || api === 'down' ? 'down' : values.every((s) => s === 'ok') ? 'ok' : 'degraded'
  return { status, version: VERSION, time: new Date().toISOString(), components }
}
