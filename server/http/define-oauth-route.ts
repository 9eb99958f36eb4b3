// The factory for the OAuth endpoints (/oauth/register, /token, /revoke; authorize has its own pages):
// public, form- or JSON-bodied, answering RFC 6749 errors instead of the envelope. It attaches `__api`
// meta like defineApiRoute so the routes appear in the OpenAPI document.
import { defineEventHandler, getHeader, readRawBody, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import type * as v from 'valibot'
import { ApiError } from '~/lib/errors'
import { useRuntime, type Runtime } from '~/kit/runtime'
import type { ApiRouteMeta } from './route-meta'
import { OAuthError, OAuthErrors, type OAuthErrorCode } from '~/domain/oauth/errors'

export interface OAuthRouteOptions<R> {
  summary: string
  description?: string
  /** form: application/x-www-form-urlencoded (token, revoke); json: registration. Documentation only. */
  requestType: 'form' | 'json'
  body?: v.GenericSchema
  response?: v.GenericSchema
  status?: number
  errors: OAuthErrorCode[]
  handler: (ctx: { event: H3Event; runtime: Runtime }) => R | Promise<R>
}

export function defineOAuthRoute<R>(opts: OAuthRouteOptions<R>) {
  const meta = {
    summary: opts.summary,
    description: opts.description,
    tags: ['OAuth'],
    auth: 'public',
    body: opts.body,
    response: opts.response,
    status: opts.status,
    errors: opts.errors,
    requestType: opts.requestType,
    errorFormat: 'oauth',
  } as ApiRouteMeta
  const handler = defineEventHandler(async (event) => {
    // Token responses carry secrets (RFC 6749 §5.1); middleware 01 already sets no-store.
    setResponseHeader(event, 'Pragma', 'no-cache')
    try {
      const result = await opts.handler({ event, runtime: useRuntime() })
      setResponseStatus(event, opts.status ?? 200)
      if (opts.status === 204 || result === undefined) {
        // RFC 7009: a successful revocation is 200 with an empty body.
        return ''
      }
      setResponseHeader(event, 'Content-Type', 'application/json')
      return JSON.stringify(result)
    } catch (e) {
      // A body over the cap is the platform's 413 envelope on every route (contract error table), not an
      // OAuth invalid_request: the client must shrink the request, not fix a parameter.
      if (e instanceof ApiError && e.status === 413) throw e
      const err = toOAuthError(e)
      if (err.status >= 500)
        console.error(
          `[oauth] ${event.context.requestId} ${event.method} ${event.path}:`,
          e instanceof Error ? e.stack : e,
        )
      setResponseStatus(event, err.status)
      for (const [k, val] of Object.entries(err.headers)) setResponseHeader(event, k, val)
      setResponseHeader(event, 'Content-Type', 'application/json')
      return JSON.stringify({ error: err.error, error_description: err.message })
    }
  })
  return Object.assign(handler, { __api: meta })
}

function toOAuthError(e: unknown): OAuthError {
  if (e instanceof OAuthError) return e
  if (e instanceof ApiError) {
    if (e.status === 429) return new OAuthError(429, 'rate_limited', e.message, e.headers)
    if (e.status < 500) return OAuthErrors.invalidRequest(e.message)
  }
  return new OAuthError(500, 'server_error', 'An unexpected error occurred.')
}

/**
 * The form parameters of a token or revocation request. RFC 6749 §3.2 wants
 * application/x-www-form-urlencoded and no parameter twice.
 */
export async function readForm(event: H3Event): Promise<Record<string, string>> {
  const type = (getHeader(event, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded')
    throw OAuthErrors.invalidRequest('Send the parameters as application/x-www-form-urlencoded.')
  const raw = await readRawBody(event, 'utf8')
  const params = new URLSearchParams(raw ?? '')
  const out: Record<string, string> = {}
  for (const [k, val] of params) {
    if (k in out) throw OAuthErrors.invalidRequest(`The parameter ${k} is given more than once.`)
    out[k] = val
  }
  return out
}

/** The authorization endpoint's browser pages (HTML and redirects, no JSON): meta for OpenAPI only. */
export function definePageRoute(
  meta: { summary: string; description: string; query?: v.ObjectSchema<any, any>; body?: v.GenericSchema },
  handler: (event: H3Event, runtime: Runtime) => unknown,
) {
  const api = {
    ...meta,
    tags: ['OAuth'],
    auth: 'public',
    requestType: meta.body ? 'form' : undefined,
    errorFormat: 'oauth',
    errors: [],
    raw: true,
  } as ApiRouteMeta
  return Object.assign(
    defineEventHandler((event) => handler(event, useRuntime())),
    { __api: api },
  )
}
