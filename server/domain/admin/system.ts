// The operator's view of the running system: status (database probe, job queue, instances, version,
// uptime), recent errors (5xx from the audit table, failed pg-boss jobs), the installed chat engines and
// their models, and the applied migration ledger (schema_migrations, written by server/db/migrate.ts).
import { and, desc, gte } from 'drizzle-orm'
import { sql } from 'drizzle-orm'
import { rowsOf } from '~/db/client'
import { auditLog, instances } from '~/db/schema'
import { INSTANCE_ID } from '~/domain/calls/instance'
import { resolveModel } from '~/domain/agents/agents'
import { checkHealth, VERSION } from '~/domain/platform/health'
import { jobTable } from '~/kit/job'
import type { Runtime } from '~/kit/runtime'

/** An instance is live when it beat within this window (it beats every few seconds, domain/calls/service.ts). */
const LIVE_WINDOW_MS = 60_000

interface QueueCounts {
  created: number
  retry: number
  active: number
  failed_24h: number
}

export async function queueCounts(runtime: Runtime): Promise<QueueCounts | null> {
  try {
    const [row] = rowsOf<Record<string, number>>(
      await runtime.database.db.execute(sql`SELECT
        count(*) FILTER (WHERE state = 'created')::int AS created,
        count(*) FILTER (WHERE state = 'retry')::int AS retry,
        count(*) FILTER (WHERE state = 'active')::int AS active,
        count(*) FILTER (WHERE state = 'failed' AND completed_on > now() - interval '24 hours')::int AS failed_24h
        FROM ${jobTable(runtime.config.queueSchema)}`),
    )
    return {
      created: Number(row?.created ?? 0),
      retry: Number(row?.retry ?? 0),
      active: Number(row?.active ?? 0),
      failed_24h: Number(row?.failed_24h ?? 0),
    }
  } catch {
    return null
  }
}

export async function systemStatus(runtime: Runtime) {
  const t0 = performance.now()
  const health = await checkHealth(runtime)
  const dbLatency = Math.round(performance.now() - t0)
  const counts = await queueCounts(runtime)
  const rows = await runtime.database.db.select().from(instances).orderBy(desc(instances.seenAt)).limit(100)
  const now = Date.now()
  return {
    status: health.status,
    version: VERSION,
    started_at: runtime.startedAt.toISOString(),
    uptime_s: Math.floor((now - runtime.startedAt.getTime()) / 1000),
    instance_id: INSTANCE_ID,
    components: health.components,
    database: { kind: runtime.database.kind, status: health.components.db, probe_ms: dbLatency },
    queue: {
      status: health.components.jobs,
      depth: counts ? counts.created + counts.retry : null,
      created: counts?.created ?? null,
      retry: counts?.retry ?? null,
      active: counts?.active ?? null,
      failed_24h: counts?.failed_24h ?? null,
    },
    instances: rows.map((r) => ({
      instance_id: r.id,
      started_at: r.startedAt.toISOString(),
      seen_at: r.seenAt.toISOString(),
      live: now - r.seenAt.getTime() < LIVE_WINDOW_MS,
      current: r.id === INSTANCE_ID,
    })),
    providers: {
      chat: runtime.providers.chat.name,
      telephony: runtime.providers.telephony.name,
    },
  }
}

const cut = (s: unknown, n: number) => (typeof s === 'string' ? (s.length > n ? `${s.slice(0, n)}…` : s) : null)

/** 5xx answers (audit rows) and failed jobs of the last `hours`, newest first, at most `limit` of each. */
export async function recentErrors(runtime: Runtime, opts: { hours: number; limit: number }) {
  const since = new Date(Date.now() - opts.hours * 3_600_000)
  const db = runtime.database.db
  const requests = await db
    .select()
    .from(auditLog)
    .where(and(gte(auditLog.statusCode, 500), gte(auditLog.createdAt, since)))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(opts.limit)
  let jobs: Record<string, unknown>[] = []
  try {
    jobs = rowsOf<Record<string, unknown>>(
      await db.execute(sql`SELECT id::text AS id, name, retry_count, output, created_on, completed_on
        FROM ${jobTable(runtime.config.queueSchema)} WHERE state = 'failed' AND completed_on >= ${since.toISOString()}::timestamptz
        ORDER BY completed_on DESC LIMIT ${opts.limit}`),
    )
  } catch {
    jobs = []
  }
  const iso = (d: unknown) => (d ? new Date(d as string).toISOString() : null)
  return {
    since: since.toISOString(),
    requests: requests.map((r) => ({
      request_id: r.requestId,
      method: r.method,
      path: r.path,
      status: r.statusCode,
      error_code: r.errorCode,
      credential_id: r.credentialId,
      account_ids: r.accountIds,
      duration_ms: r.durationMs,
      created_at: r.createdAt.toISOString(),
    })),
    jobs: jobs.map((j) => {
      const output = (j.output ?? {}) as Record<string, unknown>
      return {
        job_id: String(j.id),
        name: String(j.name),
        retry_count: Number(j.retry_count ?? 0),
        error: cut(
          output.message ?? (typeof j.output === 'string' ? j.output : JSON.stringify(j.output ?? null)),
          1000,
        ),
        created_at: iso(j.created_on),
        failed_at: iso(j.completed_on),
      }
    }),
  }
}

/** Every installed chat engine and its models; `active` is the one SVC_CHAT_ENGINE chose for this instance. */
export function aiModels(runtime: Runtime) {
  const active = runtime.providers.chat.name
  return runtime.registries.chat
    .list()
    .map((e) => ({
      engine: e.name,
      active: e.name === active,
      models: [...e.models],
      default_model: e.name === active ? resolveModel(runtime, false) : (e.models[0] ?? null),
      large_model: e.name === active ? resolveModel(runtime, true) : (e.models[1] ?? e.models[0] ?? null),
    }))
    .sort((a, b) => a.engine.localeCompare(b.engine))
}

/** The applied migration ledger, in name (= application) order. */
export async function appliedMigrations(runtime: Runtime) {
  const rows = rowsOf<{ name: string; checksum: string; applied_at: string | Date }>(
    await runtime.database.db.execute(sql`SELECT name, checksum, applied_at FROM schema_migrations ORDER BY name ASC`),
  )
  return rows.map((r) => ({ name: r.name, checksum: r.checksum, applied_at: new Date(r.applied_at).toISOString() }))
}
