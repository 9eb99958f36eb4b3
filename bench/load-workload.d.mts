// Types of bench/load-workload.mjs for the chaos test (TypeScript) — the module itself is plain ESM.
export interface Recorded {
  route: string
  method: string
  path: string
  status: number
  ms: number
  t0: number
  t1: number
  failure: 'transport' | 'proxy' | null
  /** The transport error's code (ECONNRESET …), when there was no answer. */
  error: string | null
}
export interface Answer extends Recorded {
  body: any
  text: string
  headers: Headers | null
}
export type Request = (
  method: string,
  path: string,
  opts?: {
    key?: string
    body?: unknown
    form?: FormData
    headers?: Record<string, string>
    route?: string
    idempotencyKey?: string
  },
) => Promise<Answer>
export interface RouteReport {
  route: string
  requests: number
  per_s: number
  p50_ms: number
  p99_ms: number
  '2xx': number
  '4xx': number
  '429': number
  '5xx': number
  lost: number
}
export interface Report {
  seconds: number
  requests: number
  per_s: number
  status_5xx: number
  status_429: number
  lost: number
  routes: RouteReport[]
}
export interface Recorder {
  all: Recorded[]
  add(r: Recorded): void
  report(from: number, to: number): Report
}
export interface Tenant {
  index: number
  userId: string
  accountId: string
  key: string
  endpoints: { id: string; path: string }[]
  chatAgent: string
  phoneAgent: string
  number: string
  profile: string
}
export interface Ledger {
  tenants: { tenant: Tenant; [k: string]: unknown }[]
  unexpected: { what: string; status: number; failure: string | null; t0: number; t1: number; text?: string }[]
  abandoned: { what: string; conv: string; mid: string; status: number; code?: string }[]
  suspension: SuspensionState | null
}
/** What the suspension scenario did (createSuspension): times in ms since epoch. */
export interface SuspensionState {
  tenant: number
  accountId: string
  campaign: string | null
  contacts: number
  /** The seeded moments, ms after the run's start (resumeAt null: resumed after the run). */
  planned: { suspendAt: number; resumeAt: number | null } | null
  /** When the suspension was first sent. */
  sentAt: number | null
  /** t0: first attempt sent; t1: its 200 arrived. */
  suspended: { t0: number; t1: number } | null
  resumed: { t0: number; t1: number } | null
  resumedMidRun: boolean
  atResume: { status: number; campaign?: string; progress?: Record<string, number> } | null
  stopped: { at: number; error: string | null } | null
  /** The tenant's own requests inside the suspended window: refused 403 account_suspended, or served. */
  refused: number
  served: string[]
}
export interface Receiver {
  origin: string
  byPath: Map<string, Map<string, number>>
  events: Map<string, { type: string; account: string; subject: string }>
  readonly total: number
  close(): Promise<void>
}
export type Op = 'read' | 'list' | 'chat' | 'kb' | 'calls' | 'build' | 'campaign'

export declare const sleep: (ms: number) => Promise<void>
export declare const LOAD_RATE_LIMITS: Record<string, number>
export declare const LOAD_QUOTAS: string
export declare const PACE: number
export declare function rateLimitsEnv(limits?: Record<string, number>): string
export declare function prng(seed: number): () => number
export declare function createRecorder(): Recorder
export declare function createClient(
  base: string,
  recorder: Recorder | null,
  opts?: { ip?: string; timeoutMs?: number },
): Request
export declare function startSite(): Promise<{ origin: string; close(): Promise<void> }>
export declare function startReceiver(): Promise<Receiver>
export declare function setupTenants(opts: {
  request: Request
  masterKey: string
  count: number
  site: { origin: string }
  receiver: Receiver
  tag?: string
}): Promise<Tenant[]>
export declare function createLedger(tenants: Tenant[]): Ledger
export declare function createActors(opts: {
  request: Request
  ledger: Ledger
  limits?: Record<string, number>
  random?: () => number
  retryMs?: number
  /** Simulated inbound calls in the calls op (default true; else outbound calls only). */
  inbound?: boolean
}): Record<Op, (t: Tenant) => Promise<void>>
export declare function runActors(opts: {
  ops: Record<Op, (t: Tenant) => Promise<void>>
  tenants: Tenant[]
  weights: Partial<Record<Op, number>>
  users: number
  stopAt: number
  random?: () => number
}): Promise<void>

export declare const SUSPENSION_SETTLE_MS: number
export declare function noteSuspension(ledger: Ledger, t: Tenant, r: Recorded & { body?: any }): boolean
export declare function simulatedDials(logChunks: string[]): { callId: string; at: number }[]
export declare function createSuspension(opts: {
  request: Request
  masterKey: string
  ledger: Ledger
  tenant: Tenant
  random?: () => number
  contacts?: number
}): {
  state: SuspensionState
  prepare(): Promise<SuspensionState>
  run(opts: { from: number; stopAt: number; log?: (line: string) => void }): Promise<void>
  finish(): Promise<void>
}
