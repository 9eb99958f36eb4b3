// Shapes of the knowledge sync (decisions "Knowledge sync"): the agent setting kb_sync and the sync resource.
import * as v from 'valibot'
import { Cursor, Id, Limit } from '~/lib/schemas'

export const KB_SYNC_SCHEDULES = ['off', 'daily', 'weekly'] as const
export type KbSyncSchedule = (typeof KB_SYNC_SCHEDULES)[number]

export interface KbSyncSettingValue {
  schedule: KbSyncSchedule
  deletion: 'keep' | 'remove'
  reindex: boolean
}

/** What an agent that never set kb_sync reads (and what null resets it to). */
export const KB_SYNC_DEFAULT: KbSyncSettingValue = { schedule: 'off', deletion: 'keep', reindex: true }

/** The patch value: any of the three keys (the others keep their value), or null for the default. */
export const KbSyncSetting = v.pipe(
  v.nullable(
    v.strictObject({
      schedule: v.optional(v.picklist(KB_SYNC_SCHEDULES, 'schedule is off, daily or weekly.')),
      deletion: v.optional(v.picklist(['keep', 'remove'] as const, 'deletion is keep or remove.')),
      reindex: v.optional(v.boolean('reindex is true or false.')),
    }),
  ),
  v.description(
    '{schedule: off|daily|weekly, deletion: keep|remove, reindex: boolean} (default {off, keep, true}); keys left out keep their value, null restores the default. A scheduled sync runs once a day or a week at a time of its own within the period; a page that answers 404 or 410 is deleted from the knowledge with deletion remove, kept with keep (reported in removed either way); with reindex the summary is rebuilt after a sync that changed a document.',
  ),
)

/** The setting as stored (or absent), with every key filled. */
export function kbSyncOf(settings: Record<string, unknown> | null | undefined): KbSyncSettingValue {
  const raw = (settings?.kb_sync ?? null) as Partial<KbSyncSettingValue> | null
  return { ...KB_SYNC_DEFAULT, ...(raw ?? {}) }
}

export const SyncParams = v.object({ agt: Id('agt'), sync: Id('sync') })
export const SyncListQuery = v.strictObject({ limit: Limit(100, 50), cursor: Cursor })

const Urls = v.array(v.string())
export const KbSync = v.object({
  sync_id: v.string(),
  agent_id: v.string(),
  trigger: v.picklist(['manual', 'schedule']),
  status: v.picklist(['running', 'succeeded', 'failed']),
  pages_checked: v.number(),
  not_modified: v.number(),
  unchanged: v.number(),
  added: Urls,
  changed: Urls,
  removed: Urls,
  summary_rebuild: v.boolean(),
  error: v.nullable(v.string()),
  started_at: v.pipe(v.string(), v.isoTimestamp()),
  finished_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
})
export type KbSync = v.InferOutput<typeof KbSync>
