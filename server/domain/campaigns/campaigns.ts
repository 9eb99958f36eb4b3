// Campaigns (cmp_<n>): create, list, read, the start / pause / stop transitions, progress and the
// per-contact rows. Every query is scoped by account: another account's campaign is 404 not_found, its
// agent 404 agent_not_found, its profile or list 404 not_found. A transition runs in one transaction that
// locks the campaign row (SELECT … FOR UPDATE), so two instances racing on one campaign queue up and the
// second sees the first one's status. The first start copies the list's items into campaign_contacts;
// the dialler (scheduler.ts) is kicked after a transition to running has committed.
import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { campaignContacts, campaigns } from '~/db/schema'
import { loadAgent } from '~/domain/agents/rows'
import { assertMayDial } from '~/domain/limits/phone-network'
import { loadList } from '~/domain/contact-lists/lists'
import { loadProfile } from '~/domain/profiles/profiles'
import type { Runtime } from '~/kit/runtime'
import { apiError, Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { kickCampaign } from './scheduler'
import {
  CONTACT_STATUSES,
  type Campaign,
  type CampaignStatus,
  type ContactStatus,
  type CreateCampaignBody,
  type Day,
  type Progress,
} from './schemas'

export type CampaignRow = typeof campaigns.$inferSelect
export type CampaignContactRow = typeof campaignContacts.$inferSelect

const campaignNotFound = () => Errors.notFound('Campaign')

/** The one account a campaign request acts for (data routes always resolve one). */
export function campaignAccount(account: { id: string | null }): string {
  if (!account.id) throw campaignNotFound()
  return account.id
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

export function emptyProgress(): Progress {
  return { total: 0, pending: 0, in_progress: 0, completed: 0, no_answer: 0, failed: 0, dnc_skipped: 0, outcomes: {} }
}

export function presentCampaign(r: CampaignRow, progress: Progress): Campaign {
  return {
    campaign_id: r.id,
    agent_id: r.agentId,
    profile_id: r.profileId,
    list_id: r.listId,
    name: r.name,
    status: r.status as CampaignStatus,
    schedule: {
      timezone: r.schedule.timezone,
      days: r.schedule.days as Day[],
      start: r.schedule.start,
      end: r.schedule.end,
    },
    max_concurrent: r.maxConcurrent,
    max_attempts: r.maxAttempts,
    retry_delay_minutes: r.retryDelayMinutes,
    progress,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    started_at: iso(r.startedAt),
    finished_at: iso(r.finishedAt),
  }
}

/** The campaign of that account, optionally locked for update; anything else is 404 not_found. */
export async function loadCampaign(ex: Executor, accountId: string, id: string, lock = false): Promise<CampaignRow> {
  const q = ex
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, id), eq(campaigns.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw campaignNotFound()
  return row
}

/** The progress of each campaign named, from one grouped count of its contacts (a draft has none). */
export async function progressOf(ex: Executor, ids: string[]): Promise<Map<string, Progress>> {
  const out = new Map(ids.map((id) => [id, emptyProgress()]))
  if (!ids.length) return out
  const rows = await ex
    .select({
      campaignId: campaignContacts.campaignId,
      status: campaignContacts.status,
      outcome: campaignContacts.outcome,
      n: count(),
    })
    .from(campaignContacts)
    .where(inArray(campaignContacts.campaignId, ids))
    .groupBy(campaignContacts.campaignId, campaignContacts.status, campaignContacts.outcome)
  for (const r of rows) {
    const p = out.get(r.campaignId)
    if (!p) continue
    const n = Number(r.n)
    p.total += n
    if ((CONTACT_STATUSES as readonly string[]).includes(r.status)) p[r.status as ContactStatus] += n
    if (r.outcome !== null) p.outcomes[r.outcome] = (p.outcomes[r.outcome] ?? 0) + n
  }
  return out
}

async function present(ex: Executor, row: CampaignRow): Promise<Campaign> {
  const progress = (await progressOf(ex, [row.id])).get(row.id) ?? emptyProgress()
  return presentCampaign(row, progress)
}

/**
 * A draft campaign. The profile and the list must belong to the same agent of the account: another
 * account's (or an unknown) agent is 404 agent_not_found, profile or list 404 not_found; a profile or
 * list of another agent of the account is 400 validation_error on profile_id or list_id.
 */
export async function createCampaign(runtime: Runtime, accountId: string, body: CreateCampaignBody) {
  const db = runtime.database.db
  await loadAgent(db, accountId, body.agent_id)
  const profile = await loadProfile(db, accountId, body.profile_id)
  if (profile.agentId !== body.agent_id)
    throw Errors.validation('profile_id', `Profile ${profile.id} belongs to another agent than ${body.agent_id}.`)
  const list = await loadList(db, accountId, body.list_id)
  if (list.agentId !== body.agent_id)
    throw Errors.validation('list_id', `Contact list ${list.id} belongs to another agent than ${body.agent_id}.`)
  const [row] = await db
    .insert(campaigns)
    .values({
      accountId,
      agentId: body.agent_id,
      profileId: body.profile_id,
      listId: body.list_id,
      name: body.name,
      schedule: body.schedule,
      maxConcurrent: body.max_concurrent,
      maxAttempts: body.max_attempts,
      retryDelayMinutes: body.retry_delay_minutes,
    })
    .returning()
  return presentCampaign(row, emptyProgress())
}

/** Newest first; `req` is bound to filters { account_id, agent_id, status } and sort -created_at,-id. */
export async function listCampaigns(
  runtime: Runtime,
  accountId: string,
  filters: { agentId?: string; status?: CampaignStatus },
  req: KeysetRequest,
) {
  const db = runtime.database.db
  const rows = await db
    .select()
    .from(campaigns)
    .where(
      and(
        eq(campaigns.accountId, accountId),
        filters.agentId === undefined ? undefined : eq(campaigns.agentId, filters.agentId),
        filters.status === undefined ? undefined : eq(campaigns.status, filters.status),
        afterPosition(req, campaigns.createdAt, campaigns.id),
      ),
    )
    .orderBy(desc(campaigns.createdAt), desc(campaigns.id))
    .limit(req.binding.limit + 1)
  const progress = await progressOf(
    db,
    rows.slice(0, req.binding.limit).map((r) => r.id),
  )
  return keysetPage(
    req,
    rows,
    (r) => [r.createdAt.toISOString(), r.id],
    (r) => presentCampaign(r, progress.get(r.id) ?? emptyProgress()),
  )
}

export async function getCampaign(runtime: Runtime, accountId: string, id: string) {
  const db = runtime.database.db
  return present(db, await loadCampaign(db, accountId, id))
}

export async function getProgress(runtime: Runtime, accountId: string, id: string): Promise<Progress> {
  const db = runtime.database.db
  await loadCampaign(db, accountId, id)
  return (await progressOf(db, [id])).get(id) ?? emptyProgress()
}

export type Transition = 'start' | 'pause' | 'stop'

/** The statuses each transition leaves from; anything else is 409 invalid_state. */
const FROM: Record<Transition, readonly CampaignStatus[]> = {
  start: ['draft', 'paused'],
  pause: ['running'],
  stop: ['draft', 'running', 'paused'],
}

const invalidState = (action: Transition, status: string) =>
  apiError(
    'invalid_state',
    `The campaign is ${status}: ${action} applies only to a campaign that is ${FROM[action].join(' or ')}.`,
  )

/**
 * start: draft → running (the first start copies the list's items into campaign_contacts and sets
 * started_at; an empty list completes the campaign at once), paused → running. pause: running → paused.
 * stop: draft | running | paused → stopped (finished_at set). Answers the campaign after the change. With a real
 * telephony provider a trial account starts nothing (403 plan_limit_reached; an unknown campaign is 404 first).
 */
export async function transitionCampaign(runtime: Runtime, accountId: string, id: string, action: Transition) {
  if (action === 'start') {
    await loadCampaign(runtime.database.db, accountId, id)
    await assertMayDial(runtime.database, runtime.providers.telephony, accountId)
  }
  const row = await runtime.database.tx(async (tx) => {
    const cur = await loadCampaign(tx, accountId, id, true)
    if (!FROM[action].includes(cur.status as CampaignStatus)) throw invalidState(action, cur.status)
    const now = new Date()
    let next: Partial<CampaignRow>
    if (action === 'start' && cur.status === 'draft') {
      const copied = await copyContacts(tx, cur)
      next = copied ? { status: 'running', startedAt: now } : { status: 'completed', startedAt: now, finishedAt: now }
    } else if (action === 'start') next = { status: 'running' }
    else if (action === 'pause') next = { status: 'paused' }
    else next = { status: 'stopped', finishedAt: now }
    const [updated] = await tx
      .update(campaigns)
      .set({ ...next, updatedAt: now })
      .where(eq(campaigns.id, id))
      .returning()
    return updated
  })
  if (row.status === 'running') await kickCampaign(runtime, id)
  return present(runtime.database.db, row)
}

/** Copies the list's items into the campaign's contacts (pending, 0 attempts); answers how many it holds. */
async function copyContacts(tx: Executor, campaign: CampaignRow): Promise<number> {
  await tx.execute(sql`
    INSERT INTO campaign_contacts (campaign_id, item_id, phone_e164, name, timezone, variables)
    SELECT ${campaign.id}, id, phone_e164, name, timezone, variables
    FROM contact_list_items WHERE list_id = ${campaign.listId}
    ON CONFLICT DO NOTHING`)
  const [{ n }] = await tx
    .select({ n: count() })
    .from(campaignContacts)
    .where(eq(campaignContacts.campaignId, campaign.id))
  return Number(n)
}

/** Item ids (itm_<n>) in numeric order: by length, then text. */
const itemOrder = (col: typeof campaignContacts.itemId) => [sql`length(${col})`, col]

function afterItem(req: KeysetRequest): SQL | undefined {
  if (!req.after) return undefined
  const [lastId] = req.after as [string]
  return sql`(length(${campaignContacts.itemId}), ${campaignContacts.itemId}) > (length(${lastId}), ${lastId})`
}

/** The campaign's contacts in item id order (the list's import order); `req` is bound to filters
 *  { campaign_id, status } and sort item_id. A draft has none yet. */
export async function listContacts(
  runtime: Runtime,
  accountId: string,
  id: string,
  filters: { status?: ContactStatus },
  req: KeysetRequest,
) {
  const db = runtime.database.db
  await loadCampaign(db, accountId, id)
  const rows = await db
    .select()
    .from(campaignContacts)
    .where(
      and(
        eq(campaignContacts.campaignId, id),
        filters.status === undefined ? undefined : eq(campaignContacts.status, filters.status),
        afterItem(req),
      ),
    )
    .orderBy(...itemOrder(campaignContacts.itemId))
    .limit(req.binding.limit + 1)
  return keysetPage(
    req,
    rows,
    (r) => [r.itemId],
    (r) => ({
      item_id: r.itemId,
      phone_e164: r.phoneE164,
      status: r.status as ContactStatus,
      attempts: r.attempts,
      last_call_id: r.lastCallId,
      outcome: r.outcome,
      next_attempt_at: iso(r.nextAttemptAt),
    }),
  )
}
