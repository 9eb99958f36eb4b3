// The operator's platform defaults (GET/PATCH /admin/config, POST /admin/reload): per-minute rate limits
// per class, default daily quotas and the idle time after which open text conversations are abandoned,
// stored in platform_config (one row per section: `rate_limits`, `quotas`, each a jsonb object of
// overrides; `conversation_idle_seconds`, a jsonb number or null). Layers, lowest first: the built-in
// figures, the boot environment (SVC_RATE_LIMITS, SVC_QUOTAS, SVC_CONVERSATION_IDLE_SECONDS), the stored
// overrides. Every instance polls the table every CONFIG_POLL_MS (one small read), so a change reaches
// every instance within that period without a restart; the instance that writes applies it at once, and
// POST /admin/reload applies the stored rows at once. `call_countries` (issue 30) is one more row: a jsonb
// array of ISO country codes or null, the countries outbound calls, campaign dials and transfers may reach.
import { inArray, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { platformConfig } from '~/db/schema'
import { CONVERSATION_IDLE_SECONDS } from '~/config'
import { applyQuotaDefaults, currentQuotaDefaults, QUOTA_KINDS, type QuotaKind } from '~/domain/limits/quotas'
import type { Runtime } from '~/kit/runtime'
import { applyCallCountries, countryCode, currentCallCountries } from '~/domain/phone-numbers/dialable'
import { DEFAULT_RATE_LIMITS, RATE_CLASSES, type RateClass } from '~/kit/rate-limit'

export const CONFIG_POLL_MS = 5_000
const SECTIONS = ['rate_limits', 'quotas'] as const
type Section = (typeof SECTIONS)[number]
/** A single-figure setting: its own row, the figure itself as the jsonb value. */
const IDLE_KEY = 'conversation_idle_seconds'
/** The countries calls may go to: a jsonb array of ISO codes, or null (every country). */
const COUNTRIES_KEY = 'call_countries'

export interface StoredConfig {
  rate_limits: Partial<Record<RateClass, number>>
  quotas: Partial<Record<QuotaKind, number>>
  conversation_idle_seconds: number | null
  call_countries: string[] | null
  updated_at: Date | null
}

export interface ConfigPatch {
  rate_limits?: Partial<Record<RateClass, number | null>>
  quotas?: Partial<Record<QuotaKind, number | null>>
  conversation_idle_seconds?: number | null
  call_countries?: string[] | null
}

/** True when the patch names nothing to change: no key, or only empty sections (null on a figure removes it). */
export const patchIsEmpty = (patch: ConfigPatch) =>
  !Object.values(patch).some((x) => x !== undefined && (x === null || typeof x !== 'object' || Object.keys(x).length))

/** What each runtime applied: its boot environment (kept to rebuild from) and when it last applied. */
const applied = new WeakMap<
  Runtime,
  { env: Record<string, number>; envIdleSeconds: number; at: Date; updatedAt: Date | null }
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

/** A stored idle figure inside the documented range, else null (a row written by hand is not trusted). */
const idleSecondsOf = (value: unknown): number | null =>
  typeof value === 'number' &&
  Number.isInteger(value) &&
  value >= CONVERSATION_IDLE_SECONDS.min &&
  value <= CONVERSATION_IDLE_SECONDS.max
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
    .where(inArray(platformConfig.key, [...SECTIONS, IDLE_KEY, COUNTRIES_KEY]))
  const byKey = new Map(rows.map((r) => [r.key, r]))
  const times = rows.map((r) => r.updatedAt.getTime())
  return {
    rate_limits: pick(byKey.get('rate_limits')?.value, RATE_CLASSES),
    quotas: pick(byKey.get('quotas')?.value, QUOTA_KINDS),
    conversation_idle_seconds: idleSecondsOf(byKey.get(IDLE_KEY)?.value),
    call_countries: countriesOf(byKey.get(COUNTRIES_KEY)?.value),
    updated_at: times.length ? new Date(Math.max(...times)) : null,
  }
}

/** Applies stored overrides to this runtime: runtime.config.rateLimits is rebuilt in place (every limiter
 *  reads it per request), the quota defaults are replaced, and runtime.config.conversationIdleSeconds (read
 *  by each idle sweep) is the stored figure or else the boot environment's. */
export function applyConfig(runtime: Runtime, stored: StoredConfig) {
  let state = applied.get(runtime)
  if (!state) {
    state = {
      env: { ...runtime.config.rateLimits },
      envIdleSeconds: runtime.config.conversationIdleSeconds,
      at: new Date(),
      updatedAt: null,
    }
    applied.set(runtime, state)
  }
  const limits = runtime.config.rateLimits
  for (const k of Object.keys(limits)) delete limits[k]
  Object.assign(limits, state.env, stored.rate_limits)
  applyQuotaDefaults(stored.quotas)
  runtime.config.conversationIdleSeconds = stored.conversation_idle_seconds ?? state.envIdleSeconds
  applyCallCountries(stored.call_countries)
  state.at = new Date()
  state.updatedAt = stored.updated_at
}

export async function reloadConfig(runtime: Runtime) {
  const stored = await readStoredConfig(runtime.database.db)
  applyConfig(runtime, stored)
  return presentConfig(runtime, stored)
}

/** Polls platform_config; answers the stop function. A failed read is logged and retried on the next tick. */
export function startConfigPoller(runtime: Runtime, intervalMs = CONFIG_POLL_MS): () => void {
  let running = false
  const tick = async () => {
    if (running) return
    running = true
    try {
      applyConfig(runtime, await readStoredConfig(runtime.database.db))
    } catch (err) {
      console.error(`[config] could not read platform_config: ${err instanceof Error ? err.message : err}`)
    } finally {
      running = false
    }
  }
  const timer = setInterval(tick, intervalMs)
  timer.unref?.()
  return () => clearInterval(timer)
}

export function presentConfig(runtime: Runtime, stored: StoredConfig) {
  const state = applied.get(runtime)
  const rate: Record<string, number> = {}
  for (const c of RATE_CLASSES) rate[c] = runtime.config.rateLimits[c] ?? DEFAULT_RATE_LIMITS[c]
  return {
    rate_limits: rate,
    quotas: currentQuotaDefaults(),
    conversation_idle_seconds: runtime.config.conversationIdleSeconds,
    call_countries: currentCallCountries(),
    overrides: {
      rate_limits: stored.rate_limits,
      quotas: stored.quotas,
      conversation_idle_seconds: stored.conversation_idle_seconds,
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
    const idle = patch.conversation_idle_seconds
    if (idle !== undefined) {
      // null is kept as a JSON null (no override) so that the row's updated_at still records the change.
      const value = idle === null ? sql`'null'::jsonb` : idle
      await tx
        .insert(platformConfig)
        .values({ key: IDLE_KEY, value, updatedAt: new Date() })
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
