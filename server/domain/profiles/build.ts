// The profile build (POST /profiles/{prf}/build → the profile.build job): one step, instructions. The
// chat engine writes the phone prompt from the profile's role and the agent's knowledge summary; the goal
// is appended under its own line. The prompt is stored as an immutable profile_prompt_versions row
// (label build-<n>) that becomes the profile's prompt_version, and the profile turns ready, unless it was
// patched while the build ran (it then stays draft: the new version matches the old role).
import { and, desc, eq, or, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { accounts, agents, profileBuilds, profilePromptVersions, profiles, type BuildStep } from '~/db/schema'
import { checkBalance } from '~/domain/conversations/billing'
import { internalDetail, PUBLIC_MESSAGES, publicMessage } from '~/domain/kb/public-error'
import { readSummary } from '~/domain/kb/summary'
import { consumeQuota } from '~/domain/limits/quotas'
import type { JobContext } from '~/kit/job'
import { Errors, apiError } from '~/lib/errors'
import { STALE_RUN_MS, strandedIn } from '~/domain/builds/builds'
import { MAX_PROMPT } from './placeholders'
import { loadProfile, type ProfileRow } from './profiles'
import type { ProfileBuild } from './schemas'

export const PROFILE_BUILD_JOB = 'profile.build'

type ProfileBuildRow = typeof profileBuilds.$inferSelect

export function presentProfileBuild(row: ProfileBuildRow): ProfileBuild {
  return {
    build_id: row.id,
    agent_id: row.agentId,
    profile_id: row.profileId,
    build_number: row.buildNumber,
    status: row.status as ProfileBuild['status'],
    from_step: 'instructions',
    steps: row.steps.map((s) => ({
      name: 'instructions' as const,
      status: s.status as ProfileBuild['steps'][number]['status'],
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

async function latest(ex: Executor, profileId: string): Promise<ProfileBuildRow | undefined> {
  const [row] = await ex
    .select()
    .from(profileBuilds)
    .where(eq(profileBuilds.profileId, profileId))
    .orderBy(desc(profileBuilds.buildNumber))
    .limit(1)
  return row
}

/**
 * Queues a build of the profile (202): 409 build_in_progress while one is queued or running; billing
 * (402) and the builds quota apply as for an agent build. The caller sends PROFILE_BUILD_JOB.
 */
export async function startProfileBuild(database: Database, accountId: string, id: string): Promise<ProfileBuild> {
  return database.tx(async (tx) => {
    const profile = await loadProfile(tx, accountId, id, true)
    const last = await latest(tx, id)
    if (last && (last.status === 'queued' || last.status === 'running')) {
      throw apiError('build_in_progress', `Build ${last.id} of this profile is ${last.status}; wait for it to finish.`)
    }
    await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('no key update')
    await checkBalance(tx, accountId)
    await consumeQuota(tx, accountId, 'builds')
    const steps: BuildStep[] = [
      { name: 'instructions', status: 'queued', started_at: null, finished_at: null, error: null },
    ]
    const [row] = await tx
      .insert(profileBuilds)
      .values({
        profileId: id,
        agentId: profile.agentId,
        accountId,
        status: 'queued',
        steps,
        buildNumber: (last?.buildNumber ?? 0) + 1,
      })
      .returning()
    return presentProfileBuild(row)
  })
}

export async function getLatestProfileBuild(database: Database, accountId: string, id: string): Promise<ProfileBuild> {
  await loadProfile(database.db, accountId, id)
  const row = await latest(database.db, id)
  if (!row) throw Errors.notFound('Build')
  return presentProfileBuild(row)
}

/** Profile builds to re-send (see strandedIn). */
export const strandedProfileBuilds = (database: Database, olderThanMs: number, queueSchema: string) =>
  strandedIn(database, profileBuilds, olderThanMs, { schema: queueSchema, job: PROFILE_BUILD_JOB })

/** As the agent build's claim (domain/builds/run.ts): `takeover` on a retry of the job takes a running build at once. */
async function claim(database: Database, buildId: string, takeover = false): Promise<ProfileBuildRow | undefined> {
  const [row] = await database.db
    .update(profileBuilds)
    .set({ status: 'running', startedAt: sql`coalesce(${profileBuilds.startedAt}, now())` })
    .where(
      and(
        eq(profileBuilds.id, buildId),
        or(
          eq(profileBuilds.status, 'queued'),
          and(
            eq(profileBuilds.status, 'running'),
            takeover
              ? sql`true`
              : sql`${profileBuilds.startedAt} < now() - make_interval(secs => ${STALE_RUN_MS / 1000})`,
          ),
        ),
      ),
    )
    .returning()
  return row
}

/** The outbound prompt: the engine's phone instructions for the role, then the goal. */
async function writePrompt(ctx: JobContext, profile: ProfileRow): Promise<string> {
  const [agent] = await ctx.database.db.select().from(agents).where(eq(agents.id, profile.agentId))
  if (!agent) throw new Error(`agent ${profile.agentId} is gone`)
  const summary = await readSummary(ctx.database.db, agent.id)
  const settings = (agent.settings ?? {}) as Record<string, unknown>
  const body = await ctx.providers.chat.writeInstructions({
    businessName: agent.businessName ?? null,
    websiteUrl: agent.websiteUrl ?? '',
    summary: summary?.text ?? '',
    language: (settings.default_language as string | undefined) ?? agent.voiceLocale ?? 'en',
    agentType: agent.agentType,
    role: profile.role,
    refinementRules: agent.refinementRules ?? [],
    surface: 'phone',
  })
  const prompt = profile.goal ? `${body.trimEnd()}\n\nGoal of this call: ${profile.goal}` : body
  return prompt.slice(0, MAX_PROMPT)
}

const same = (a: ProfileRow, b: ProfileRow) =>
  a.role === b.role &&
  a.goal === b.goal &&
  a.greeting === b.greeting &&
  JSON.stringify(a.capabilities) === JSON.stringify(b.capabilities)

/** Runs one profile build; safe to deliver twice (the build is claimed first). */
export async function runProfileBuild(
  ctx: JobContext,
  buildId: string,
  opts: { takeover?: boolean } = {},
): Promise<void> {
  const build = await claim(ctx.database, buildId, opts.takeover)
  if (!build) return
  const startedAt = new Date().toISOString()
  const step: BuildStep = {
    name: 'instructions',
    status: 'running',
    started_at: startedAt,
    finished_at: null,
    error: null,
  }
  await ctx.database.db
    .update(profileBuilds)
    .set({ steps: [step] })
    .where(eq(profileBuilds.id, build.id))
  try {
    const [profile] = await ctx.database.db.select().from(profiles).where(eq(profiles.id, build.profileId))
    if (!profile) throw new Error(`profile ${build.profileId} is gone`)
    const prompt = await writePrompt(ctx, profile)
    const label = `build-${build.buildNumber}`
    await ctx.database.tx(async (tx) => {
      const [cur] = await tx.select().from(profiles).where(eq(profiles.id, profile.id)).for('update')
      await tx
        .insert(profilePromptVersions)
        .values({
          profileId: profile.id,
          agentId: profile.agentId,
          accountId: profile.accountId,
          body: prompt,
          label,
          buildId: build.id,
        })
        .onConflictDoNothing()
      await tx
        .update(profiles)
        .set({ promptVersion: label, ...(cur && same(cur, profile) ? { status: 'ready' } : {}), updatedAt: new Date() })
        .where(eq(profiles.id, profile.id))
      const done = { ...step, status: 'succeeded', finished_at: new Date().toISOString() }
      await tx
        .update(profileBuilds)
        .set({ steps: [done], status: 'succeeded', finishedAt: new Date() })
        .where(eq(profileBuilds.id, build.id))
    })
  } catch (err) {
    ctx.log(`profile build ${build.id} failed: ${internalDetail(err)}`)
    const failed = {
      ...step,
      status: 'failed',
      finished_at: new Date().toISOString(),
      error: publicMessage(err, PUBLIC_MESSAGES.engine),
    }
    await ctx.database.db
      .update(profileBuilds)
      .set({ steps: [failed], status: 'failed', finishedAt: new Date() })
      .where(eq(profileBuilds.id, build.id))
  }
}
