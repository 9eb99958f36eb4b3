// The factory of the API routes: the pipeline steps in order (guards → parse → idempotency → handler →
// envelope, audited when the response finishes), with the route's options attached to the handler it
// returns, which is what the OpenAPI builder reads (pitfall 8: lazy routes, no import side effects).
import { defineEventHandler, getHeader, getRouterParams, setResponseStatus } from 'h3'
import { apiError } from '~/lib/errors'
import type * as v from 'valibot'
import { resolveAccount, type AccountScope } from '~/domain/accounts/resolve'
import type { Principal } from '~/domain/credentials/principal'
import { useRuntime } from '~/kit/runtime'
import type { Page } from '~/lib/keyset'
import { list, single } from './envelope'
import { bindKeyset } from './keyset'
import { auditedCredential, auditMemberParams, auditOnFinish } from './pipeline/audit'
import {
  applyRateLimit,
  authenticateRequest,
  rateClassOf,
  refuseSuspendedMemberParams,
  requireAllowedIp,
  requireScope,
  warnOfExpiry,
} from './pipeline/guards'
import { withIdempotency, type Answer, type Prepared } from './pipeline/idempotency'
import { isMultipart, parseBody, parseQuery, parseWith, readParts, takeAccountPart } from './pipeline/parse'
import type { ApiRouteMeta, ApiRouteOptions, ObjSchema } from './route-meta'

export type { ApiRouteMeta, ApiRouteOptions, MultipartPart, RouteContext } from './route-meta'

const LIST = Symbol('list')
export type ListResult<T> = Page<T> & { [LIST]: true }
/** Mark a handler result as a list page so it gets the list envelope. */
export const asList = <T>(page: Page<T>): ListResult<T> => ({ ...page, [LIST]: true })
export const isList = (result: unknown): result is ListResult<unknown> =>
  !!result && typeof result === 'object' && LIST in result

const STATUS = Symbol('status')
/** Answer `result` with `status` instead of the route's own (POST /dnc: 200 for a number already listed). */
export const withStatus = <T extends object>(status: number, result: T): T => ({ ...result, [STATUS]: status })
const statusOf = (result: unknown, fallback: number): number =>
  result && typeof result === 'object' && STATUS in result ? (result as { [STATUS]: number })[STATUS] : fallback

/** The envelope of a handler's answer: list, single object, empty (204) or written by the handler. */
export function envelopeOf(status: number, result: unknown, raw: boolean, rawStatus: number): Answer {
  if (raw) return { status: rawStatus, kind: 'raw', payload: result }
  status = statusOf(result, status)
  if (status === 204) return { status, kind: 'empty', payload: null }
  return isList(result)
    ? { status, kind: 'list', payload: { ...result } }
    : { status, kind: 'single', payload: result ?? {} }
}

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
      auditOnFinish(event, runtime, () => auditedCredential(event))
      principal = await authenticateRequest(event, runtime)
      event.context.principal = principal
      requireAllowedIp(event, principal.ipAllowlist, 'key')
      warnOfExpiry(event, principal)
      // The operator surface refuses every other credential before it parses or reads anything.
      if (opts.masterOnly && principal.type !== 'master')
        throw apiError('forbidden', 'The operator surface takes the master key only.')
      requireScope(principal, opts)
      await applyRateLimit(event, runtime, principal.credentialId, rateClassOf(opts, event))
    } else {
      // A public route has no credential to count: it names what it is metered per, if anything.
      for (const subject of opts.rateSubjects?.(event) ?? [])
        await applyRateLimit(event, runtime, subject, rateClassOf(opts, event))
    }
    const prepare = async (): Promise<Prepared> => {
      const params = parseWith(opts.params, getRouterParams(event, { decode: true }), 'params')
      if (principal) refuseSuspendedMemberParams(principal, params, opts)
      const { query, accountId: queryAccount } = parseQuery(event, opts)
      const form =
        opts.multipart && isMultipart(event) ? takeAccountPart(await readParts(event), opts, event.method) : null
      const { body, accountId: bodyAccount } = form
        ? { body: undefined, accountId: form.accountId }
        : await parseBody(event, opts)
      const parts = form?.parts ?? null
      // account_id as the route's own schema read it (the reads of several accounts), else as the pipeline took it.
      const bodyOwn = ownAccountId(body)
      const account = principal
        ? await resolveAccount(runtime.database, principal, {
            queryAccountIds: accountIdsFrom(ownAccountId(query) ?? queryAccount),
            bodyAccountId: typeof bodyOwn === 'string' ? bodyOwn : bodyAccount,
            header: getHeader(event, 'x-svc-account'),
            dataRoute: !!opts.dataRoute,
          })
        : null
      event.context.account = account
      if (principal) auditMemberParams(event, principal, params)
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
        keyset: bindKeyset(event, principal, runtime.config.secret),
      } as any)
      return envelopeOf(opts.status ?? 200, result, !!opts.raw, event.node.res.statusCode)
    }
    const idemKey = getHeader(event, 'idempotency-key')
    const answer =
      principal && event.method === 'POST' && idemKey !== undefined && !opts.raw
        ? await withIdempotency(event, runtime, principal.credentialId, idemKey, opts, prepare, execute)
        : await execute(await prepare())
    if (answer.kind === 'raw') return answer.payload
    setResponseStatus(event, answer.status)
    if (answer.kind === 'empty') return null
    if (answer.kind === 'list') return list(event, answer.payload as Page<unknown>)
    return single(event, answer.payload as object)
  })
  return Object.assign(handler, { __api: { ...opts, handler: undefined } as ApiRouteMeta })
}

const ownAccountId = (parsed: unknown): unknown => (parsed as { account_id?: unknown } | undefined)?.account_id

function accountIdsFrom(value: unknown): string[] {
  if (value === undefined || value === null) return []
  return (Array.isArray(value) ? value : [value]).map(String)
}
