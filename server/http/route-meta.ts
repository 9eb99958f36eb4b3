// The options a route declares and the context its handler receives: the contract between the route
// files, the factories (define-*-route.ts), the pipeline steps, the OpenAPI builder and the MCP tools.
import type { H3Event } from 'h3'
import type * as v from 'valibot'
import type { AccountScope } from '~/domain/accounts/resolve'
import type { Principal } from '~/domain/credentials/principal'
import type { Scope } from '~/domain/credentials/scopes'
import type { RateClass } from '~/kit/rate-limit'
import type { Runtime } from '~/kit/runtime'
import type { KeysetRequest } from '~/lib/keyset'
import type { ErrorCode } from '~/lib/errors'
import type { OAuthErrorCode } from '~/domain/oauth/errors'

export type ObjSchema = v.ObjectSchema<any, any> | v.StrictObjectSchema<any, any> | v.LooseObjectSchema<any, any>
export type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined

export interface MultipartPart {
  name?: string
  filename?: string
  type?: string
  data: Buffer
}

/** A list request's position, bound to this route, its filters, sort and limit, and the credential. */
export type BindKeyset = (opts: {
  filters: Record<string, unknown>
  sort: string
  limit: number
  cursor: string | undefined
}) => Promise<KeysetRequest>

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
  keyset: BindKeyset
}

export interface DynamicRateClass {
  classes: RateClass[]
  pick: (event: H3Event) => RateClass
}

export interface ApiRouteOptions<PS, QS, BS, R> {
  summary: string
  description?: string
  tags?: string[]
  /** 'public' routes skip authentication, rate limits and audit (health, openapi, docs). 'session' is set
   *  by defineSessionRoute (dashboard routes), 'widget' by defineWidgetRoute (the public widget API);
   *  neither is passed to defineApiRoute. */
  auth?: 'credential' | 'public' | 'session' | 'widget'
  scope?: Scope
  /** Alternative scopes that also unlock the route (e.g. summaries:read or conversations:read). */
  anyScope?: Scope[]
  /** A fixed class, or (for reads whose class depends on the query, e.g. deep-history conversation
   *  reads → backfill) the classes it may pick from and the picker, run on the raw request. */
  rateClass?: RateClass | DynamicRateClass
  /** A public route metered in its rateClass anyway: the subjects it counts per (each spends a point), since
   *  there is no credential (the signed recording URL: its token and the client IP). */
  rateSubjects?: (event: H3Event) => string[]
  /** The operator surface (defineAdminRoute): any credential but the master key is 403 forbidden. */
  masterOnly?: boolean
  /** Data routes refuse the master key unless X-Svc-Account names an account. */
  dataRoute?: boolean
  /** A partner route that reads a member as such (GET /partners/members/{usr}): a suspended member's `usr`
   *  in its path is not refused (elsewhere a partner key naming it is 403 account_suspended). */
  readsSuspendedMembers?: boolean
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
  /** Other 2xx statuses the handler may pick with withStatus (POST /dnc: 200 for a number already listed);
   *  the document lists them with the same body. */
  otherStatuses?: number[]
  /** Schema of the success payload (without meta), for the OpenAPI document only. */
  response?: v.GenericSchema
  /** Error codes this route can answer beyond the generic ones, for the OpenAPI document (OAuth codes on
   *  the OAuth endpoints, whose errorFormat is 'oauth'). */
  errors?: (ErrorCode | OAuthErrorCode)[]
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

export type ApiRouteMeta = Omit<ApiRouteOptions<any, any, any, any>, 'handler'>
