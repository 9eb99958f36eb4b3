// The factory of the public widget API (/v1/widget/*, issue 17): called from visitors' browsers, so no
// API key ever works here and the credential is the agent's public token (X-Svc-Widget-Token) plus an
// Origin in that agent's allowed_domains. Steps: refuse an Authorization header (401), the per-IP limit,
// the token (401 invalid_widget_token, counted as a failed authentication per IP), the Origin (403
// origin_not_allowed, no CORS headers), CORS for the admitted Origin, the per-token limit, then the
// same parse step and envelope as the API. Not audited (visitors are not credentials). A POST takes an
// Idempotency-Key like the API's, scoped to the widget token and the visitor token (decisions
// "Behaviour", Smaller contract points). Preflights are answered by middleware 05 (a preflight carries no token) and count
// against the same per-IP limit. A per-IP 429 carries CORS only for a token and Origin this instance
// admitted lately (admitted-origins.ts): the limit runs before any query, so it cannot ask the database.
import { defineEventHandler, getHeader, getRouterParams, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import type * as v from 'valibot'
import type { AgentRow } from '~/domain/agents/agents'
import { invalidWidgetToken, originAllowed, originNotAllowed, widgetAgent } from '~/domain/widget/access'
import { WIDGET_RATE_DEFAULTS, type RateDecision } from '~/kit/rate-limit'
import { useRuntime, type Runtime } from '~/kit/runtime'
import { ApiError, Errors } from '~/lib/errors'
import { sha256Hex } from '~/lib/opaque-token'
import { admittedLately, rememberAdmitted } from './admitted-origins'
import { clientIpKey } from './client-ip'
import { envelopeOf } from './define-api-route'
import { single } from './envelope'
import { countAuthFailure } from './pipeline/guards'
import { withIdempotency, type Prepared } from './pipeline/idempotency'
import { parseBody, parseQuery, parseWith } from './pipeline/parse'
import type { ApiRouteMeta, ApiRouteOptions, ObjSchema, Out } from './route-meta'

export const WIDGET_ALLOW_HEADERS =
  'content-type, x-svc-widget-token, x-svc-visitor-token, x-request-id, idempotency-key'
export const WIDGET_EXPOSE_HEADERS =
  'x-request-id, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, ratelimit, ratelimit-policy, idempotent-replayed'

export interface WidgetRouteContext<P, B> {
  event: H3Event
  params: P
  body: B
  /** The agent the widget token belongs to. */
  agent: AgentRow
  runtime: Runtime
}

type WidgetRouteOptions<PS, BS, R> = Pick<
  ApiRouteOptions<PS, undefined, BS, R>,
  'summary' | 'description' | 'params' | 'body' | 'status' | 'response' | 'errors' | 'example' | 'secretResponse'
> & {
  handler: (ctx: WidgetRouteContext<Out<PS>, Out<BS>>) => R | Promise<R>
}

function consume(runtime: Runtime, key: string, name: keyof typeof WIDGET_RATE_DEFAULTS) {
  const points = runtime.config.rateLimits[name] ?? WIDGET_RATE_DEFAULTS[name]
  return runtime.rateLimiter.consume(`${name}:${key}`, points)
}

async function limit(runtime: Runtime, key: string, name: keyof typeof WIDGET_RATE_DEFAULTS) {
  const d = await consume(runtime, key, name)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
  return d
}

/**
 * The per-client-IP limit (widget_ip), spent by every widget request and preflight before any database
 * query; 429 rate_limited past it, with no CORS headers (see the factory for its own 429).
 */
export const widgetIpLimit = (event: H3Event, runtime: Runtime) => limit(runtime, clientIpKey(event), 'widget_ip')

function rateHeaders(event: H3Event, name: string, d: RateDecision) {
  setResponseHeader(event, 'X-RateLimit-Limit', String(d.limit))
  setResponseHeader(event, 'X-RateLimit-Remaining', String(d.remaining))
  setResponseHeader(event, 'X-RateLimit-Reset', String(d.resetEpoch))
  const reset = Math.max(0, d.resetEpoch - Math.floor(Date.now() / 1000))
  setResponseHeader(event, 'RateLimit-Policy', `"${name}";q=${d.limit};w=60`)
  setResponseHeader(event, 'RateLimit', `"${name}";r=${d.remaining};t=${reset}`)
}

/** CORS for an admitted Origin: echoed, never `*`, with Vary so no cache serves it to another origin. */
export function allowOrigin(event: H3Event, origin: string) {
  setResponseHeader(event, 'Access-Control-Allow-Origin', origin)
  setResponseHeader(event, 'Vary', 'Origin')
  setResponseHeader(event, 'Access-Control-Expose-Headers', WIDGET_EXPOSE_HEADERS)
}

/**
 * Who is calling, for every widget entry point (the HTTP routes and the voice socket's upgrade): no
 * Authorization header (401), the per-IP limit, the token (401, counted as a failed authentication), the
 * Origin against that agent's allowed_domains (403, no CORS), CORS for it, then the per-token limit.
 */
export async function admitWidget(
  event: H3Event,
  runtime: Runtime,
  token: string | undefined,
): Promise<{ agent: AgentRow; origin: string; ipDecision: RateDecision }> {
  // An API key (or any Authorization) is refused outright: these routes are for browsers, and a key
  // sent from a page would be a leaked key.
  if (getHeader(event, 'authorization') !== undefined)
    throw invalidWidgetToken(
      'API keys are not accepted on widget routes; send the agent widget public token in X-Svc-Widget-Token.',
    )
  const ipDecision = await consume(runtime, clientIpKey(event), 'widget_ip')
  const origin = getHeader(event, 'origin')
  if (!ipDecision.allowed) {
    // Readable by the page (so the script can tell a 429 from a refusal) when this token was admitted
    // from this Origin lately; known without a query, which the IP limit exists to spare.
    if (admittedLately(token, origin)) allowOrigin(event, origin as string)
    throw Errors.rateLimited(ipDecision.retryAfter)
  }
  let agent: AgentRow
  try {
    agent = await widgetAgent(runtime.database, token)
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) await countAuthFailure(event, runtime)
    throw e
  }
  if (!origin || !originAllowed(origin, agent.allowedDomains)) throw originNotAllowed()
  allowOrigin(event, origin)
  rememberAdmitted(token as string, origin)
  await limit(runtime, sha256Hex(token as string), 'widget_token')
  return { agent, origin, ipDecision }
}

/**
 * Whose Idempotency-Key a widget request uses: the widget token's (a regenerated token starts afresh) and
 * the visitor token's, so a stored answer (a new conversation's visitor token, a reply) replays only to
 * the visitor who holds it; the handler's own visitor-token check does not run on a replay.
 */
function widgetCredential(token: string, event: H3Event): string {
  const visitor = getHeader(event, 'x-svc-visitor-token')
  return `widget:${sha256Hex(token).slice(0, 32)}:${visitor ? sha256Hex(visitor).slice(0, 32) : '-'}`
}

export function defineWidgetRoute<
  PS extends ObjSchema | undefined = undefined,
  BS extends v.GenericSchema | undefined = undefined,
  R = unknown,
>(opts: WidgetRouteOptions<PS, BS, R>) {
  const meta: ApiRouteMeta = {
    ...opts,
    handler: undefined,
    auth: 'widget',
    tags: ['Widget and voice'],
    rateClass: undefined,
  } as ApiRouteMeta
  const handler = defineEventHandler(async (event) => {
    const runtime = useRuntime()
    const token = getHeader(event, 'x-svc-widget-token')
    const { agent, ipDecision } = await admitWidget(event, runtime, token)
    rateHeaders(event, 'widget_ip', ipDecision)
    const prepare = async (): Promise<Prepared> => {
      const params = parseWith(opts.params, getRouterParams(event, { decode: true }), 'params')
      // No widget route takes a query: an unknown key is 400 unsupported_filter, as on every API route.
      parseQuery(event, meta)
      const { body } = await parseBody(event, meta)
      return { params, query: undefined, body, parts: null, account: null }
    }
    const execute = async ({ params, body }: Prepared) =>
      envelopeOf(opts.status ?? 200, await opts.handler({ event, params, body, agent, runtime } as any), false, 200)
    const idemKey = getHeader(event, 'idempotency-key')
    const answer =
      event.method === 'POST' && idemKey !== undefined
        ? await withIdempotency(
            event,
            runtime,
            widgetCredential(token as string, event),
            idemKey,
            meta,
            prepare,
            execute,
          )
        : await execute(await prepare())
    setResponseStatus(event, answer.status)
    if (answer.kind === 'empty') return null
    return single(event, answer.payload as object)
  })
  return Object.assign(handler, { __api: meta })
}
