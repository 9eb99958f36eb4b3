// The one place that authenticates, resolves the account, checks the scope, applies the rate class,
// validates params, query and body, and wraps the envelope. It also attaches its options to the handler
// it returns, which is what the OpenAPI builder reads (pitfall 8: lazy routes, no import side effects).
import {
  defineEventHandler,
  getHeader,
  getQuery,
  getRouterParams,
  readMultipartFormData,
  readRawBody,
  setResponseHeader,
  setResponseStatus,
  type H3Event,
} from 'h3'
import * as v from 'valibot'
import { ApiError, Errors, splitCoded, toApiError } from '~/lib/errors'
import type { Page } from '~/lib/keyset'
import { list, single } from './envelope'
import { useRuntime, type Runtime } from '~/kit/runtime'
import { DEFAULT_RATE_LIMITS, type RateClass } from '~/kit/rate-limit'
import { clientIp } from './client-ip'
import { authenticate } from '~/domain/credentials/authenticate'
import { ipAllowed } from '~/lib/ip'
import type { Principal } from '~/domain/credentials/principal'
import type { Scope } from '~/domain/credentials/scopes'
import { resolveAccount, type AccountScope } from '~/domain/accounts/resolve'
import {
  bodyHash,
  checkKey,
  claim,
  complete,
  release,
  scopedKey,
  type StoredAnswer,
} from '~/domain/idempotency/idempotency'
import { carriesSecret, openAnswer, sealAnswer } from '~/domain/idempotency/sealed'

export interface MultipartPart {
  name?: string
  filename?: string
  type?: string
  data: Buffer
}

type ObjSchema = v.ObjectSchema<any, any> | v.StrictObjectSchema<any, any> | v.LooseObjectSchema<any, any>
type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined

export interface RouteContext<P, Q, B> {
  event: H3Event
  params: P
  query: Q
  body: B
  /** The parts of a multipart/form-data body on a `multipart` route (body is then undefined); else null. */
  parts: MultipartPart[] | null
  /** null only on public routes. */
  principal: Principal
  /** The account the request acts for (contract "Account resolution"); null where the route is account-free. */
  account: AccountScope
  runtime: Runtime
}

export interface ApiRouteOptions<PS, QS, BS, R> {
  summary: string
  description?: string
  tags?: string[]
  /** 'public' routes skip authentication, rate limits and audit (health, openapi, docs). 'session' is set
   *  by defineSessionRoute (dashboard routes), never passed to defineApiRoute. */
  auth?: 'credential' | 'public' | 'session'
  scope?: Scope
  /** Alternative scopes that also unlock the route (e.g. summaries:read or conversations:read). */
  anyScope?: Scope[]
  /** A fixed class, or (for reads whose class depends on the query, e.g. deep-history conversation
   *  reads → backfill) the classes it may pick from and the picker, run on the raw request. */
  rateClass?: RateClass | DynamicRateClass
  /** Data routes refuse the master key unless X-Svc-Account names an account. */
  dataRoute?: boolean
  params?: PS
  query?: QS
  /** Names of query keys that may repeat (?account_id=a&account_id=b); they arrive as arrays. */
  repeatable?: string[]
  body?: BS
  /** The route also takes multipart/form-data (capped at 10 MB by middleware 02): its parts arrive as
   *  `parts` unparsed, while a JSON body still goes through `body`. OpenAPI documents both media types;
   *  `multipartBody` describes the form for it. */
  multipart?: boolean
  multipartBody?: v.GenericSchema
  /** A patch: an empty body is 400 empty_update. */
  patch?: boolean
  /** The answer carries a secret (a key, a signing secret, a login link): an Idempotency-Key replay copy
   *  is stored only encrypted, bound to the credential and key (issue 12). */
  secretResponse?: boolean
  status?: number
  /** Schema of the success payload (without meta), for the OpenAPI document only. */
  response?: v.GenericSchema
  /** Error codes this route can answer beyond the generic ones, for the OpenAPI document. */
  errors?: string[]
  example?: unknown
  /** The handler writes the response itself (docs, openapi): no envelope. */
  raw?: boolean
  /** OpenAPI responses written out, for a route that does not answer the envelope (the MCP connector). */
  responses?: Record<string, unknown>
  /** Documentation only (OAuth endpoints): the request body media type and the RFC 6749 error shape. */
  requestType?: 'json' | 'form'
  errorFormat?: 'envelope' | 'oauth'
  handler: (ctx: RouteContext<Out<PS>, Out<QS>, Out<BS>>) => R | Promise<R>
}

const LIST = Symbol('list')
export type ListResult<T> = Page<T> & { [LIST]: true }
/** Mark a handler result as a list page so it gets the list envelope. */
export const asList = <T>(page: Page<T>): ListResult<T> => ({ ...page, [LIST]: true })
export const isList = (result: unknown): result is ListResult<unknown> =>
  !!result && typeof result === 'object' && LIST in result

export interface DynamicRateClass {
  classes: RateClass[]
  pick: (event: H3Event) => RateClass
}

/** The class this request is metered in. */
export function rateClassOf(opts: Pick<ApiRouteMeta, 'rateClass'>, event: H3Event): RateClass {
  const rc = opts.rateClass
  if (rc === undefined) return defaultRateClass(event.method)
  return typeof rc === 'string' ? rc : rc.pick(event)
}

export type ApiRouteMeta = Omit<ApiRouteOptions<any, any, any, any>, 'handler'>

const PAYLOAD_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export function defineApiRoute<
  PS extends ObjSchema | undefined = undefined,
  QS extends ObjSchema | undefined = undefined,
  BS extends v.GenericSchema | undefined = undefined,
  R = unknown,
>(opts: ApiRouteOptions<PS, QS, BS, R>) {
  const handler = defineEventHandler(async (event) => {
    const runtime = useRuntime()
    let principal: Principal | null = null
    if (opts.auth !== 'public') {
      auditOnFinish(event, runtime)
      principal = await authenticateRequest(event, runtime)
      event.context.principal = principal
      if (!ipAllowed(clientIp(event), principal.ipAllowlist))
        throw new ApiError(403, 'ip_not_allowed', 'This key does not accept requests from your IP address.')
      warnOfExpiry(event, principal)
      requireScope(principal, opts)
      await applyRateLimit(event, runtime, principal, rateClassOf(opts, event))
    }
    const prepare = async (): Promise<Prepared> => {
      const params = parseWith(opts.params, getRouterParams(event, { decode: true }), 'params')
      const query = parseQuery(event, opts)
      const parts = opts.multipart && isMultipart(event) ? await readParts(event) : null
      const body = parts ? undefined : await parseBody(event, opts)
      const account = principal
        ? await resolveAccount(runtime.database, principal, {
            queryAccountIds: accountIdsFrom((query as any)?.account_id ?? getQuery(event).account_id),
            bodyAccountId: typeof (body as any)?.account_id === 'string' ? (body as any).account_id : undefined,
            header: getHeader(event, 'x-svc-account'),
            dataRoute: !!opts.dataRoute,
          })
        : null
      event.context.account = account
      return { params, query, body, parts, account }
    }
    const execute = async ({ params, query, body, parts, account }: Prepared): Promise<Answer> => {
      const result = await opts.handler({
        event,
        params,
        query,
        body,
        parts,
        principal: principal as Principal,
        account: account as AccountScope,
        runtime,
      } as any)
      if (opts.raw) return { status: event.node.res.statusCode, kind: 'raw', payload: result }
      const status = opts.status ?? 200
      if (status === 204) return { status, kind: 'empty', payload: null }
      return isList(result)
        ? { status, kind: 'list', payload: { ...result } }
        : { status, kind: 'single', payload: result ?? {} }
    }
    const idemKey = getHeader(event, 'idempotency-key')
    const answer =
      principal && event.method === 'POST' && idemKey !== undefined && !opts.raw
        ? await withIdempotency(event, runtime, principal, idemKey, opts, prepare, execute)
        : await execute(await prepare())
    if (answer.kind === 'raw') return answer.payload
    setResponseStatus(event, answer.status)
    if (answer.kind === 'empty') return null
    if (answer.kind === 'list') return list(event, answer.payload as Page<unknown>)
    return single(event, answer.payload as object)
  })
  return Object.assign(handler, { __api: { ...opts, handler: undefined } as ApiRouteMeta })
}

interface Prepared {
  params: unknown
  query: unknown
  body: unknown
  parts: MultipartPart[] | null
  account: AccountScope | null
}
interface Answer {
  status: number
  kind: 'single' | 'list' | 'empty' | 'raw'
  payload: unknown
}

async function withIdempotency(
  event: H3Event,
  runtime: Runtime,
  principal: Principal,
  key: string,
  opts: ApiRouteMeta,
  prepare: () => Promise<Prepared>,
  execute: (p: Prepared) => Promise<Answer>,
) {
  checkKey(key)
  const raw = await readRawBody(event, false)
  // The request is parsed and its account resolved before the key is claimed, because the account is part
  // of the key; a request that fails there is stored and replayed like any other 4xx answer.
  let prepared: Prepared | undefined
  let failure: unknown
  try {
    prepared = await prepare()
  } catch (e) {
    failure = e
  }
  const scoped = scopedKey(key, prepared ? (prepared.account?.ids ?? []) : null, {
    header: getHeader(event, 'x-svc-account'),
    query: getQuery(event).account_id,
  })
  const k = {
    credentialId: principal.credentialId,
    method: event.method,
    path: event.path.split('?')[0].replace(/^\/api\/v1\//, '/v1/'),
    key: scoped,
  }
  const claimed = await claim(runtime.database, k, bodyHash(raw ?? undefined))
  if ('replay' in claimed) {
    setResponseHeader(event, 'Idempotent-Replayed', 'true')
    const stored = openAnswer(runtime.config.secret, k, claimed.replay)
    if (stored.kind === 'error') {
      const e = stored.payload as {
        code: string
        message: string
        field: string | null
        headers: Record<string, string>
      }
      throw new ApiError(stored.status, e.code, e.message, e.field, e.headers)
    }
    return stored as Answer
  }
  try {
    if (!prepared) throw failure
    const answer = await execute(prepared)
    // A secret-bearing answer is never kept in clear, not even for the 24 hours of a replay.
    const stored = answer as StoredAnswer
    await complete(
      runtime.database,
      k,
      opts.secretResponse || carriesSecret(stored) ? sealAnswer(runtime.config.secret, k, stored) : stored,
    )
    return answer
  } catch (err) {
    const api = toApiError(err)
    if (api.status < 500) {
      await complete(runtime.database, k, {
        status: api.status,
        kind: 'error',
        payload: { code: api.code, message: api.message, field: api.field, headers: api.headers },
      })
    } else {
      await release(runtime.database, k).catch(() => {})
    }
    throw err
  }
}

/** One audit row per metered request, success or failure, written after the response (batched). */
function auditOnFinish(event: H3Event, runtime: Runtime) {
  const started = Date.now()
  // The path as the client sent it (the /api/v1 alias rewrites event.path), never with the query string.
  const path = (event.node.req.originalUrl ?? event.node.req.url ?? event.path).split('?')[0]
  event.node.res.once('finish', () => {
    const principal = event.context.principal as Principal | null | undefined
    const account = event.context.account as AccountScope | null | undefined
    runtime.audit.record({
      requestId: event.context.requestId,
      credentialType: principal?.type ?? null,
      credentialId: principal?.credentialId ?? null,
      accountIds: account?.ids ?? (principal?.homeAccountId ? [principal.homeAccountId] : []),
      crossAccount: principal?.type === 'master',
      method: event.method,
      path,
      statusCode: event.node.res.statusCode,
      errorCode: (event.context.errorCode as string | undefined) ?? null,
      ip: clientIp(event),
      userAgent: (event.node.req.headers['user-agent'] as string | undefined)?.slice(0, 512) ?? null,
      durationMs: Date.now() - started,
      createdAt: new Date(started),
    })
  })
}

/** Within 30 days of expiry every response says how many days are left (contract, "Other rules"). */
export function warnOfExpiry(event: H3Event, principal: Principal) {
  if (!principal.expiresAt) return
  const left = principal.expiresAt.getTime() - Date.now()
  if (left <= 30 * 86_400_000)
    setResponseHeader(event, 'X-Svc-Key-Expires-In', `${Math.max(0, Math.ceil(left / 86_400_000))}d`)
}

export function defaultRateClass(method: string): RateClass {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write'
}

/** Bearer authentication with the failed-attempt count per client IP (also used by /mcp). */
export async function authenticateRequest(event: H3Event, runtime: Runtime): Promise<Principal> {
  try {
    return await authenticate(getHeader(event, 'authorization'), runtime.config.masterKey, runtime.credentialResolvers)
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) await countAuthFailure(event, runtime)
    throw e
  }
}

export const AUTH_FAILURES_PER_MINUTE = 20
const failureKey = (event: H3Event) => `ip:${clientIp(event)}`

/** Failed unauthenticated attempts are limited per client IP; past the limit they answer 429. */
export async function countAuthFailure(event: H3Event, runtime: Runtime) {
  const d = await runtime.authFailureLimiter.consume(failureKey(event), AUTH_FAILURES_PER_MINUTE)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}

/** Refuses a client that has used up its failures before a password is even checked, so guessing stops. */
export async function refuseIfFailureLimited(event: H3Event, runtime: Runtime) {
  const d = await runtime.authFailureLimiter.peek(failureKey(event), AUTH_FAILURES_PER_MINUTE)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}

export function requireScope(principal: Principal, opts: ApiRouteMeta) {
  // The master key acts for one account on data routes (contract "Account resolution"): it has none of
  // their scopes, so the X-Svc-Account rule (403 forbidden_account without it) decides instead.
  if (principal.type === 'master' && opts.dataRoute) return
  const wanted = [opts.scope, ...(opts.anyScope ?? [])].filter(Boolean) as Scope[]
  if (wanted.length && !wanted.some((s) => principal.scopes.has(s))) throw Errors.insufficientScope(wanted.join(' or '))
}

export async function applyRateLimit(event: H3Event, runtime: Runtime, principal: Principal, rateClass: RateClass) {
  const limit = runtime.config.rateLimits[rateClass] ?? DEFAULT_RATE_LIMITS[rateClass]
  const d = await runtime.rateLimiter.consume(`${principal.credentialId}:${rateClass}`, limit)
  setResponseHeader(event, 'X-RateLimit-Limit', String(d.limit))
  setResponseHeader(event, 'X-RateLimit-Remaining', String(d.remaining))
  setResponseHeader(event, 'X-RateLimit-Reset', String(d.resetEpoch))
  // The IETF fields beside them (draft-ietf-httpapi-ratelimit-headers): policy quota and window, and
  // what is left with the seconds until the window resets.
  const reset = Math.max(0, d.resetEpoch - Math.floor(Date.now() / 1000))
  setResponseHeader(event, 'RateLimit-Policy', `"${rateClass}";q=${d.limit};w=60`)
  setResponseHeader(event, 'RateLimit', `"${rateClass}";r=${d.remaining};t=${reset}`)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}

function accountIdsFrom(value: unknown): string[] {
  if (value === undefined || value === null) return []
  return (Array.isArray(value) ? value : [value]).map(String)
}

/** Turns the first valibot issue into the contract's error: unknown key first, then the first bad value. */
export function issueToError(issues: readonly v.BaseIssue<unknown>[], where: 'body' | 'query' | 'params'): ApiError {
  const unknown = issues.find((i) => (i.type === 'strict_object' || i.type === 'object') && i.expected === 'never')
  if (unknown) {
    const key = v.getDotPath(unknown) ?? String(unknown.received).replace(/^"|"$/g, '')
    return where === 'query' ? Errors.unsupportedFilter(key) : Errors.unsupportedField(key)
  }
  const issue = issues[0]
  const field = v.getDotPath(issue)
  if (
    issue.received === 'undefined' &&
    (issue.type === 'strict_object' || issue.type === 'object' || issue.kind === 'schema')
  ) {
    const { code } = splitCoded(issue.message)
    if (code === 'validation_error') return Errors.validation(field, `${field ?? 'value'} is required.`)
  }
  const { code, message } = splitCoded(issue.message)
  // Contract error table: an enum value outside its list is unsupported_filter, named by the parameter
  // itself (channel, not channel.0). A schema that means otherwise codes its message (QueryBoolean).
  if (where === 'query' && (code === 'unsupported_filter' || (!isCoded(issue.message) && isEnumIssue(issue)))) {
    const param = issue.path?.[0]?.key
    const name = typeof param === 'string' ? param : field
    return new ApiError(
      400,
      'unsupported_filter',
      code === 'unsupported_filter' || message.startsWith(`${name} `) ? message : `${name}: ${message}`,
      name,
    )
  }
  if (code !== 'validation_error') return new ApiError(400, code, message, field)
  // valibot's own messages ("Invalid type: Expected string but received 1") are fine for humans.
  return Errors.validation(field, field ? `${field}: ${message}` : message)
}

const isCoded = (message: string) => /^[a-z_]+\|/.test(message)
const ENUM_ISSUES = new Set(['picklist', 'enum', 'literal'])
const isEnumIssue = (issue: v.BaseIssue<unknown>): boolean =>
  ENUM_ISSUES.has(issue.type) || (issue.type === 'union' && !!issue.issues?.length && issue.issues.every(isEnumIssue))

export function parseWith<S extends v.GenericSchema | undefined>(
  schema: S,
  input: unknown,
  where: 'params' | 'query' | 'body',
): Out<S> {
  if (!schema) return undefined as Out<S>
  const r = v.safeParse(schema, input)
  if (!r.success) throw issueToError(r.issues, where)
  return r.output as Out<S>
}

export function parseQuery(event: H3Event, opts: ApiRouteMeta) {
  const raw = getQuery(event) as Record<string, string | string[]>
  const schema = opts.query as ObjSchema | undefined
  const known = schema ? Object.keys(schema.entries) : []
  const repeatable = new Set(opts.repeatable ?? [])
  const input: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (!known.includes(key)) throw Errors.unsupportedFilter(key)
    if (repeatable.has(key)) input[key] = Array.isArray(value) ? value : [value]
    else if (Array.isArray(value)) throw Errors.validation(key, `${key} may be given only once.`)
    else input[key] = value
  }
  return parseWith(schema, input, 'query')
}

const isMultipart = (event: H3Event) =>
  (getHeader(event, 'content-type') ?? '').toLowerCase().startsWith('multipart/form-data')

async function readParts(event: H3Event): Promise<MultipartPart[]> {
  // The body is read here, after authentication (middleware 02): its 413 passes through as is.
  const parts = await readMultipartFormData(event).catch((e) => {
    if (e instanceof ApiError) throw e
  })
  if (!parts) throw Errors.validation(null, 'The multipart/form-data body could not be parsed.')
  return parts.map((p) => ({ name: p.name, filename: p.filename, type: p.type, data: p.data }))
}

export async function parseBody(event: H3Event, opts: ApiRouteMeta): Promise<unknown> {
  if (!PAYLOAD_METHODS.has(event.method)) return undefined
  const raw = await readRawBody(event, false)
  const text = raw && raw.length ? raw.toString('utf8') : ''
  let body: unknown
  if (text.trim() === '') {
    if (opts.patch) throw Errors.emptyUpdate()
    body = opts.body ? {} : undefined
  } else {
    const type = (getHeader(event, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
    // No Content-Type is not JSON either: a body is only read as JSON when the client says it is one.
    if (type !== 'application/json' && !type.endsWith('+json')) throw Errors.unsupportedMediaType('application/json')
    try {
      body = JSON.parse(text)
    } catch {
      throw Errors.invalidJson()
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw Errors.validation(null, 'The request body must be a JSON object.')
    const keys = Object.keys(body)
    if (!opts.body) {
      if (keys.length) throw Errors.unsupportedField(keys[0])
      return undefined
    }
    if (opts.patch && keys.length === 0) throw Errors.emptyUpdate()
  }
  return parseWith(opts.body as v.GenericSchema | undefined, body, 'body')
}
