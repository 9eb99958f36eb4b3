// Outbound profiles (prf_<n>) of an agent: create, list, read, patch and clone. Every query is scoped by
// account; another account's profile is 404 not_found, another account's agent 404 agent_not_found.
// status is draft until a build writes the prompt (build.ts), then ready; a patch that changes role,
// goal, greeting or capabilities sets it back to draft (the prompt no longer matches), and prompt_version
// keeps naming the last built prompt until the next build.
import { and, desc, eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { profilePromptVersions, profiles } from '~/db/schema'
import { loadAgent } from '~/domain/agents/rows'
import type { Registries } from '~/kit/registries'
import type { Runtime } from '~/kit/runtime'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { placeholdersOf } from './placeholders'
import { MAX_NAME, type CreateProfileBody, type PatchProfileBody, type Profile } from './schemas'

export type ProfileRow = typeof profiles.$inferSelect

/** The fields whose change makes the built prompt stale. */
export const PROMPT_FIELDS = ['role', 'goal', 'greeting', 'capabilities'] as const

const profileNotFound = () => Errors.notFound('Profile')

/** The one account a profile request acts for (data routes always resolve one). */
export function profileAccount(account: { id: string | null }): string {
  if (!account.id) throw profileNotFound()
  return account.id
}

export function presentProfile(r: ProfileRow): Profile {
  return {
    profile_id: r.id,
    agent_id: r.agentId,
    name: r.name,
    role: r.role,
    goal: r.goal,
    greeting: r.greeting,
    variables: r.variables,
    capabilities: r.capabilities,
    max_call_duration_s: r.maxCallDurationS,
    status: r.status as Profile['status'],
    prompt_version: r.promptVersion,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** The profile of that account, optionally locked for update; anything else is 404 not_found. */
export async function loadProfile(ex: Executor, accountId: string, id: string, lock = false): Promise<ProfileRow> {
  const q = ex
    .select()
    .from(profiles)
    .where(and(eq(profiles.id, id), eq(profiles.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw profileNotFound()
  return row
}

/** Distinct names, each an installed capability whose outbound flag is true; else 400 validation_error (capabilities). */
export function checkCapabilities(registries: Registries, names: string[]): string[] {
  const unique = [...new Set(names)]
  for (const name of unique) {
    const cap = registries.capabilities.list().find((c) => c.name === name)
    if (!cap?.outbound) {
      throw Errors.validation(
        'capabilities',
        `"${name.slice(0, 100)}" is not an outbound capability; GET /outbound-capabilities lists them.`,
      )
    }
  }
  return unique
}

export async function createProfile(runtime: Runtime, accountId: string, agentId: string, body: CreateProfileBody) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const capabilities = checkCapabilities(runtime.registries, body.capabilities)
  const [row] = await db
    .insert(profiles)
    .values({
      accountId,
      agentId,
      name: body.name,
      role: body.role,
      goal: body.goal || null,
      greeting: body.greeting || null,
      variables: placeholdersOf(body.role, body.greeting),
      capabilities,
      maxCallDurationS: body.max_call_duration_s,
    })
    .returning()
  return presentProfile(row)
}

/** Newest first; `req` is bound to filters { agent_id } and sort -created_at,-id. */
export async function listProfiles(runtime: Runtime, accountId: string, agentId: string, req: KeysetRequest) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const rows = await db
    .select()
    .from(profiles)
    .where(
      and(
        eq(profiles.accountId, accountId),
        eq(profiles.agentId, agentId),
        afterPosition(req, profiles.createdAt, profiles.id),
      ),
    )
    .orderBy(desc(profiles.createdAt), desc(profiles.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentProfile)
}

export async function getProfile(runtime: Runtime, accountId: string, id: string) {
  return presentProfile(await loadProfile(runtime.database.db, accountId, id))
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i])

export async function patchProfile(runtime: Runtime, accountId: string, id: string, patch: PatchProfileBody) {
  const capabilities =
    patch.capabilities === undefined ? undefined : checkCapabilities(runtime.registries, patch.capabilities)
  return runtime.database.tx(async (tx) => {
    const cur = await loadProfile(tx, accountId, id, true)
    const next = {
      name: patch.name ?? cur.name,
      role: patch.role ?? cur.role,
      goal: patch.goal === undefined ? cur.goal : patch.goal || null,
      greeting: patch.greeting === undefined ? cur.greeting : patch.greeting || null,
      capabilities: capabilities ?? cur.capabilities,
      maxCallDurationS: patch.max_call_duration_s ?? cur.maxCallDurationS,
    }
    const stale =
      next.role !== cur.role ||
      next.goal !== cur.goal ||
      next.greeting !== cur.greeting ||
      !sameList(next.capabilities, cur.capabilities)
    const [row] = await tx
      .update(profiles)
      .set({
        ...next,
        variables: placeholdersOf(next.role, next.greeting),
        ...(stale ? { status: 'draft' } : {}),
        updatedAt: new Date(),
      })
      .where(eq(profiles.id, id))
      .returning()
    return presentProfile(row)
  })
}

/** A draft copy under the same agent, named "<name> (copy)", with no prompt version. */
export async function cloneProfile(runtime: Runtime, accountId: string, id: string) {
  const src = await loadProfile(runtime.database.db, accountId, id)
  const suffix = ' (copy)'
  const [row] = await runtime.database.db
    .insert(profiles)
    .values({
      accountId,
      agentId: src.agentId,
      name: `${src.name.slice(0, MAX_NAME - suffix.length)}${suffix}`,
      role: src.role,
      goal: src.goal,
      greeting: src.greeting,
      variables: src.variables,
      capabilities: src.capabilities,
      maxCallDurationS: src.maxCallDurationS,
    })
    .returning()
  return presentProfile(row)
}

/**
 * What an outbound call needs: the profile of the account and its built prompt (the body of its
 * prompt_version, null before the first build). Pass the result to fillProfile with the call variables.
 */
export async function loadProfileForCall(
  ex: Executor,
  accountId: string,
  id: string,
): Promise<{ profile: ProfileRow; prompt: string | null }> {
  const profile = await loadProfile(ex, accountId, id)
  if (!profile.promptVersion) return { profile, prompt: null }
  const [pv] = await ex
    .select({ body: profilePromptVersions.body })
    .from(profilePromptVersions)
    .where(and(eq(profilePromptVersions.profileId, id), eq(profilePromptVersions.label, profile.promptVersion)))
  return { profile, prompt: pv?.body ?? null }
}
