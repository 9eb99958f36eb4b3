// The operator's platform defaults (GET/PATCH /admin/config, POST /admin/reload): per-minute rate limits
// per class (the API classes, the widget's widget_ip/widget_token, OAuth's register/token/revoke/client_document), default
// daily quotas, the idle time after which open text conversations are abandoned and the widget's daily caps
// per agent (widget_conversations_per_day, voice_chat_minutes_per_day), stored in platform_config (one row
// per section: `rate_limits`, `quotas`, each a jsonb object of overrides; one row per single figure, a jsonb
// number or null). Layers, lowest first: the built-in figures, the boot environment (SVC_RATE_LIMITS,
// SVC_QUOTAS, SVC_CONVERSATION_IDLE_SECONDS), the stored overrides. A write to the table notifies every
// instance (a trigger, LISTEN svc_config), which reads it at once; without the LISTEN every instance polls the
// table every CONFIG_POLL_MS (one small read), so a change reaches every instance within that period without a
// restart; the instance that writes applies it at once, and
// POST /admin/reload applies the stored rows at once. `call_countries` (issue 30) is one more row: a jsonb
// array of ISO country codes or null, the countries outbound calls, campaign dials and transfers may reach.
import { inArray, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { platformConfig } from '~/db/schema'
import {
  CONVERSATION_IDLE_SECONDS,
  VOICE_CHAT_MINUTES_PER_DAY,
  WIDGET_CONVERSATIONS_PER_DAY,
  type Config,
} from '~/config'
import { applyQuotaDefaults, currentQuotaDefaults, QUOTA_KINDS, type QuotaKind } from '~/domain/limits/quotas'
import type { Runtime } from '~/kit/runtime'
import { applyCallCountries, countryCode, currentCallCountries } from '~/domain/phone-numbers/dialable'
import { RATE_LIMIT_DEFAULTS, RATE_LIMIT_NAMES, type RateLimitName } from '~/kit/rate-limit'

export const CONFIG_POLL_MS = 5_000
/** The poll once the LISTEN on CONFIG_CHANNEL is in place (decisions "Issue 36: idle, the minute sweeps"). */
export const CONFIG_BACKSTOP_MS = 60_000
/** Notified by platform_config's trigger (migration 0026) at the commit of any write to it. */
export const CONFIG_CHANNEL = 'svc_config'
const SECTIONS = ['rate_limits', 'quotas'] as const
type Section = (typeof SECTIONS)[number]
/** Single-figure settings: each its own row, the figure itself as the jsonb value; its range and the
 *  runtime.config field it replaces in place. */
export const FIGURES = {
  conversation_idle_seconds: { range: CONVERSATION_IDLE_SECONDS, field: 'conversationIdleSeconds' },
  widget_conversations_per_day: { range: WIDGET_CONVERSATIONS_PER_DAY, field: 'widgetConversationsPerDay' },
  voice_chat_minutes_per_day: { range: VOICE_CHAT_MINUTES_PER_DAY, field: 'voiceChatMinutesPerDay' },
} as const satisfies Record<string, { range: { min: number; max: number }; field: keyof Config }>
export type FigureKey = keyof typeof FIGURES
const FIGURE_KEYS = Object.keys(FIGURES) as FigureKey[]
/** The countries calls may go to: a jsonb array of ISO codes, or null (every country). */
const COUNTRIES_KEY = 'call_countries'

export type StoredConfig = {
  rate_limits: Partial<Record<RateLimitName, number>>
  quotas: Partial<Record<QuotaKind, number>>
  call_countries: string[] | null
  updated_at: Date | null
} & Record<FigureKey, number | null>

export type ConfigPatch = {
  rate_limits?: Partial<Record<RateLimitName, number | null>>
  quotas?: Partial<Record<QuotaKind, number | null>>
  call_countries?: string[] | null
} & Partial<Record<FigureKey, number | null>>

/** True when the patch names nothing to change: no key, or only empty sections (null on a figure removes it). */
export const patchIsEmpty = (patch: ConfigPatch) =>
  !Object.values(patch).some((x) => x !== undefined && (x === null || typeof x !== 'object' || Object.keys(x).length))

/** What each runtime applied: its boot environment (kept to rebuild from) and when it last applied. */
const applied = new WeakMap<
  Runtime,
  { env: Record<string, number>; envFigures: Record<FigureKey, number>; at: Date; updatedAt: Date | null }
>()

const pick = <K extends string>(value: unknown, keys: readonly K[]): Partial<Record<K, number>> => {
  const out: Partial<Record<K, number>> = {}
  if (!value || typeof value !== 'object') return out
  for (const k of keys) {
    const n = (value as Record<string, unknown>)[k]
    if (typeof n === 'number' && Number.isInteger(n) && n > 0) out[k] = n
  }
  return out
}

/** A stored figure inside its documented range, else null (a row written by hand is not trusted). */
const figureOf = (key: FigureKey, value: unknown): number | null =>
  typeof value === 'number' &&
  Number.isInteger(value) &&
  value >= FIGURES[key].range.min &&
  value <= FIGURES[key].range.max
    ? value
    : null

/** A stored country list of known codes, else null (a row written by hand is not trusted). */
const countriesOf = (value: unknown): string[] | null => {
  if (!Array.isArray(value) || !value.length) return null
  const codes = value.map((c) => (typeof c === 'string' ? countryCode(c) : null))
  return codes.every((c) => c !== null) ? [...new Set(codes as string[])] : null
}

export async function readStoredConfig(ex: Executor): Promise<StoredConfig> {
  const rows = await ex
    .select()
    .from(platformConfig)
    .where(inArray(platformConfig.key, [...SECTIONS, ...FIGURE_KEYS, COUNTRIES_KEY]))
  const byKey = new Map(rows.map((r) => [r.key, r]))
  const times = rows.map((r) => r.updatedAt.getTime())
  const figures = Object.fromEntries(FIGURE_KEYS.map((k) => [k, figureOf(k, byKey.get(k)?.value)])) as Record<
    FigureKey,
    number | null
  >
  return {
    rate_limits: pick(byKey.get('rate_limits')?.value, RATE_LIMIT_NAMES),
    quotas: pick(byKey.get('quotas')?.value, QUOTA_KINDS),
    ...figures,
    call_countries: countriesOf(byKey.get(COUNTRIES_KEY)?.value),
    updated_at: times.length ? new Date(Math.max(...times)) : null,
  }
}

/** Applies stored overrides to this runtime: runtime.config.rateLimits is rebuilt in place (every limiter
 *  reads it per request), the quota defaults are replaced, and each single figure's runtime.config field
 *  (conversationIdleSeconds, read by each idle sweep; the widget's daily caps, read per conversation) is the
 *  stored figure or else the boot environment's. */
export function applyConfig(runtime: Runtime, stored: StoredConfig) {
  let state = applied.get(runtime)
  if (!state) {
    state = {
      env: { ...runtime.config.rateLimits },
      envFigures: Object.fromEntries(FIGURE_KEYS.map((k) => [k, runtime.config[FIGURES[k].field]])) as Record<
        FigureKey,
        number
      >,
      at: new Date(),
      updatedAt: null,
    }
    applied.set(runtime, state)
  }
  const limits = runtime.config.rateLimits
  for (const k of Object.keys(limits)) delete limits[k]
  Object.assign(limits, state.env, stored.rate_limits)
  applyQuotaDefaults(stored.quotas)
  for (const k of FIGURE_KEYS) runtime.config[FIGURES[k].field] = stored[k] ?? state.envFigures[k]
  applyCallCountries(stored.call_countries)
  state.at = new Date()
  state.updatedAt = stored.updated_at
}

export async function reloadConfig(runtime: Runtime) {
  const stored = await readStoredConfig(runtime.database.db)
  applyConfig(runtime, stored)
  return presentConfig(runtime, stored)
}

/**
 * Reads platform_config when it changes and as a backstop; answers the stop function. A write to the table
 * (through the API or by hand) notifies CONFIG_CHANNEL (its trigger, migration 0026) and every instance reads it
 * at once; the poll runs every CONFIG_POLL_MS while the LISTEN is not (yet) in place, and every
 * CONFIG_BACKSTOP_MS once it is, for a notification lost while the listener's connection was re-made. A failed
 * read is logged and retried on the next tick.
 */
export function startConfigPoller(runtime: Runtime, intervalMs = CONFIG_POLL_MS): () => void {
  let running = false
  let again = false
  let stopped = false
  let listening = false
  let timer: NodeJS.Timeout | undefined
  const tick = async (): Promise<void> => {
    if (running) {
      // A notification during a read: read once more after it (the read may have missed the change).
      again = true
      return
    }
    running = true
    try {
      applyConfig(runtime, await readStoredConfig(runtime.database.db))
    } catch (err) {
      console.error(`[config] could not read platform_config: ${err instanceof Error ? err.message : err}`)
    } finally {
      running = false
    }
    if (again && !stopped) {
      again = false
      return tick()
    }
  }
  const arm = () => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(() => void tick().finally(arm), listening ? CONFIG_BACKSTOP_MS : intervalMs)
    timer.unref?.()
  }
  arm()
  void runtime.database
    .listen(CONFIG_CHANNEL, () => {
      if (!stopped) void tick()
    })
    .then((ok) => {
      listening = ok
      // Read once now: a change committed before the LISTEN was in place notified nobody here.
      if (ok && !stopped) void tick().finally(arm)
    })
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}

export function presentConfig(runtime: Runtime, stored: StoredConfig) {
  const state = applied.get(runtime)
  const rate: Record<string, number> = {}
  for (const c of RATE_LIMIT_NAMES) rate[c] = runtime.config.rateLimits[c] ?? RATE_LIMIT_DEFAULTS[c]
  return {
    rate_limits: rate,
    quotas: currentQuotaDefaults(),
    ...(Object.fromEntries(FIGURE_KEYS.map((k) => [k, runtime.config[FIGURES[k].field]])) as Record<FigureKey, number>),
    call_countries: currentCallCountries(),
    overrides: {
      rate_limits: stored.rate_limits,
      quotas: stored.quotas,
      ...(Object.fromEntries(FIGURE_KEYS.map((k) => [k, stored[k]])) as Record<FigureKey, number | null>),
      call_countries: stored.call_countries,
    },
    updated_at: stored.updated_at?.toISOString() ?? null,
    applied_at: state?.at.toISOString() ?? null,
    poll_interval_s: CONFIG_POLL_MS / 1000,
  }
}

export async function getConfig(runtime: Runtime) {
  return presentConfig(runtime, await readStoredConfig(runtime.database.db))
}

/** Merges the patch into the stored sections (null removes an override) in one transaction, then applies
 *  the result on this instance at once. */
export async function patchConfig(database: Database, runtime: Runtime, patch: ConfigPatch) {
  await database.tx(async (tx) => {
    // One writer at a time: the rows are read locked, so two concurrent patches merge instead of losing one.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('platform_config'))`)
    const current = await readStoredConfig(tx)
    for (const section of SECTIONS) {
      const changes = patch[section]
      if (!changes) continue
      const next: Record<string, number> = { ...current[section] }
      for (const [k, n] of Object.entries(changes)) {
        if (n === null || n === undefined) delete next[k]
        else next[k] = n
      }
      await tx
        .insert(platformConfig)
        .values({ key: section satisfies Section, value: next, updatedAt: new Date() })
        .onConflictDoUpdate({ target: platformConfig.key, set: { value: next, updatedAt: new Date() } })
    }
    for (const key of FIGURE_KEYS) {
      const figure = patch[key]
      if (figure === undefined) continue
      // null is kept as a JSON null (no override) so that the row's updated_at still records the change.
      const value = figure === null ? sql`'null'::jsonb` : figure
      await tx
        .insert(platformConfig)
        .values({ key, value, updatedAt: new Date() })
        .onConflictDoUpdate({ target: platformConfig.key, set: { value, updatedAt: new Date() } })
    }
    const countries = patch.call_countries
    if (countries !== undefined) {
      const value = countries === null ? sql`'null'::jsonb` : countries
      await tx
        .insert(platformConfig)
        .values({ key: COUNTRIES_KEY, value, updatedAt: new Date() })
        .onConflictDoUpdate({ target: platformConfig.key, set: { value, updatedAt: new Date() } })
    }
  })
  return reloadConfig(runtime)
}
