// Builds: the only way an agent comes to exist (contract Lifecycle step 2). A request validates the site
// and the voice, then one transaction creates the agent and a queued build and takes the quotas; the
// steps run in the agent.build job (run.ts).
import { and, count, desc, eq, inArray, not, or, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { accounts, agentBuilds, agents, type profileBuilds } from '~/db/schema'
import { hasLiveJob } from '~/kit/job'
import type { Registries } from '~/kit/registries'
import { Errors, apiError } from '~/lib/errors'
import { consumeQuota, effectiveLimits } from '~/domain/limits/quotas'
import { checkBalance } from '~/domain/conversations/billing'
import { createAgentRecord } from '~/domain/agents/create'
import { loadAgent } from '~/domain/agents/agents'
import { assertFetchableUrl, resolvePublic } from '~/domain/kb/url-guard'
import { FetchError, safeFetch } from '~/domain/kb/safe-fetch'
import { BUILD_STEPS, type Build, type BuildCreate, type BuildStepName } from './schemas'
import type { BuildStep } from '~/db/schema'

type BuildRow = typeof agentBuilds.$inferSelect

export const BUILD_JOB = 'agent.build'

export function presentBuild(row: BuildRow): Build {
  return {
    build_id: row.id,
    agent_id: row.agentId,
    build_number: row.buildNumber,
    status: row.status as Build['status'],
    from_step: (row.fromStep ?? 'crawl') as BuildStepName,
    steps: row.steps.map((s) => ({
      name: s.name as BuildStepName,
      status: s.status as Build['steps'][number]['status'],
      started_at: s.started_at,
      finished_at: s.finished_at,
      duration_ms: s.started_at && s.finished_at ? Date.parse(s.finished_at) - Date.parse(s.started_at) : null,
      error: s.error,
    })),
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  }
}

export function initialSteps(fromStep: BuildStepName): BuildStep[] {
  const from = BUILD_STEPS.indexOf(fromStep)
  return BUILD_STEPS.map((name, i) => ({
    name,
    status: i < from ? 'skipped' : 'queued',
    started_at: null,
    finished_at: null,
    error: null,
  }))
}

/** The voice and the provider that offers it; an unknown voice is 400 validation_error. */
export async function findVoice(
  registries: Registries,
  voiceId: string,
): Promise<{ provider: string; locale: string }> {
  for (const provider of registries.voice.list()) {
    const voice = (await provider.voices()).find((v) => v.voice_id === voiceId)
    if (voice) return { provider: provider.name, locale: voice.locale }
  }
  throw Errors.validation('voice_id', `Unknown voice "${voiceId}"; GET /voices lists them.`)
}

/**
 * Refuses a site we must not fetch before anything is written: scheme, names and every resolved address,
 * and every redirect of the start page (a public page that redirects to 10.x is refused here, not later).
 * A site that is merely slow or down is not a client error: the crawl step reports it.
 */
export async function preflightSite(url: string, allowPrivateHosts: readonly string[]): Promise<string> {
  const u = assertFetchableUrl(url, { allowPrivateHosts, field: 'website_url' })
  await resolvePublic(u.hostname, { allowPrivateHosts, field: 'website_url' })
  try {
    // Only the final URL matters: the body's first bytes are enough, the rest is never read.
    const res = await safeFetch(u.href, {
      allowPrivateHosts,
      field: 'website_url',
      timeoutMs: 5000,
      maxBytes: 64 * 1024,
      truncate: true,
    })
    return res.url
  } catch (err) {
    if (err instanceof FetchError) return u.href
    throw err
  }
}

/** Serialises build admission per account (row lock), then checks billing (402), max_concurrent_builds and the builds quota. */
async function admitBuild(tx: Executor, accountId: string) {
  await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('no key update')
  // A build runs the engine (summary, greeting, instructions): billable work, refused like chat when billing blocks.
  await checkBalance(tx, accountId)
  const { maxConcurrentBuilds } = await effectiveLimits(tx, accountId)
  const [{ n }] = await tx
    .select({ n: count() })
    .from(agentBuilds)
    .where(and(eq(agentBuilds.accountId, accountId), inArray(agentBuilds.status, ['queued', 'running'])))
  if (Number(n) >= maxConcurrentBuilds) {
    throw apiError(
      'quota_exceeded',
      `max_concurrent_builds (${maxConcurrentBuilds}) builds are already queued or running; retry when one finishes.`,
      null,
      { 'Retry-After': '30' },
    )
  }
  await consumeQuota(tx, accountId, 'builds')
}

export async function startBuild(
  database: Database,
  registries: Registries,
  allowPrivateHosts: readonly string[],
  accountId: string,
  input: BuildCreate,
): Promise<{ agent_id: string; build: Build }> {
  const voice = await findVoice(registries, input.voice_id)
  const websiteUrl = await preflightSite(input.website_url, allowPrivateHosts)
  return database.tx(async (tx) => {
    await admitBuild(tx, accountId)
    await consumeQuota(tx, accountId, 'agent_creates')
    const agent = await createAgentRecord(tx, {
      accountId,
      name: input.name ?? new URL(websiteUrl).hostname.replace(/^www\./, ''),
      agentType: input.agent_type,
      websiteUrl,
      voiceId: input.voice_id,
      language: input.language,
    })
    await tx.update(agents).set({ aiProvider: voice.provider }).where(eq(agents.id, agent.id))
    const [build] = await tx
      .insert(agentBuilds)
      .values({
        agentId: agent.id,
        accountId,
        status: 'queued',
        steps: initialSteps('crawl'),
        fromStep: 'crawl',
        buildNumber: 1,
      })
      .returning()
    return { agent_id: agent.id, build: presentBuild(build) }
  })
}

export async function latestBuild(ex: Executor, accountId: string, agentId: string): Promise<BuildRow | undefined> {
  await loadAgent(ex, accountId, agentId)
  const [row] = await ex
    .select()
    .from(agentBuilds)
    .where(eq(agentBuilds.agentId, agentId))
    .orderBy(desc(agentBuilds.buildNumber), desc(agentBuilds.createdAt))
    .limit(1)
  return row
}

export async function getLatestBuild(database: Database, accountId: string, agentId: string): Promise<Build> {
  const row = await latestBuild(database.db, accountId, agentId)
  if (!row) throw Errors.notFound('Build')
  return presentBuild(row)
}

/** Re-runs the build from a step; 409 build_in_progress while one is queued or running. */
export async function rerunBuild(
  database: Database,
  accountId: string,
  agentId: string,
  fromStep: BuildStepName,
): Promise<Build> {
  return database.tx(async (tx) => {
    await loadAgent(tx, accountId, agentId, true)
    const last = await latestBuild(tx, accountId, agentId)
    if (last && (last.status === 'queued' || last.status === 'running')) {
      throw apiError('build_in_progress', `Build ${last.id} is ${last.status}; wait for it to finish.`)
    }
    await admitBuild(tx, accountId)
    const [{ n }] = await tx.select({ n: count() }).from(agentBuilds).where(eq(agentBuilds.agentId, agentId))
    const [build] = await tx
      .insert(agentBuilds)
      .values({
        agentId,
        accountId,
        status: 'queued',
        steps: initialSteps(fromStep),
        fromStep,
        buildNumber: Number(n) + 1,
      })
      .returning()
    return presentBuild(build)
  })
}

/** A running build whose worker has been silent this long is taken over by the next delivery of its job. */
export const STALE_RUN_MS = 15 * 60_000

/**
 * Builds (agent or profile) to send again: still queued after `olderThanMs` (their job was lost between
 * commit and send), or running for STALE_RUN_MS with no live job in `queue` (every job sent has ended
 * without recording the build's end: failed after its retries, each attempt's instance killed, or
 * expired). Nothing else would ever deliver such a build, which stayed running for good and held one of
 * the account's concurrent builds; the new delivery's claim takes it over as stale.
 */
export async function strandedIn(
  database: Database,
  table: typeof agentBuilds | typeof profileBuilds,
  olderThanMs: number,
  queue: { schema: string; job: string },
): Promise<string[]> {
  const rows = await database.db
    .select({ id: table.id })
    .from(table as typeof agentBuilds)
    .where(
      or(
        and(eq(table.status, 'queued'), sql`${table.createdAt} < now() - make_interval(secs => ${olderThanMs / 1000})`),
        and(
          eq(table.status, 'running'),
          sql`${table.startedAt} < now() - make_interval(secs => ${STALE_RUN_MS / 1000})`,
          not(hasLiveJob(queue.schema, queue.job, 'build_id', table.id)),
        ),
      ),
    )
    .limit(500)
  return rows.map((r) => r.id)
}

/** Agent builds to re-send (see strandedIn). */
export const strandedBuilds = (database: Database, olderThanMs: number, queueSchema: string) =>
  strandedIn(database, agentBuilds, olderThanMs, { schema: queueSchema, job: BUILD_JOB })
