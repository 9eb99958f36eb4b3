// The OpenAPI 3.1 document is built from the route table: each route's valibot schemas, scope, rate
// class and error codes, so the document cannot drift from what the code validates.
import type * as v from 'valibot'
import { toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema'
import type { RouteEntry } from './route-table'
import type { ApiRouteMeta } from './route-meta'
import { VERSION } from '~/domain/platform/health'
import { ERROR_CODES, isErrorCode, statusOf } from '~/lib/errors'
import { AccountId } from '~/lib/schemas'
import { ACCOUNT_KEY, takesAccountId } from './pipeline/parse'
import { OAUTH_ERROR_STATUS, type OAuthErrorCode } from '~/domain/oauth/errors'
import { SCHEMA_NAMES } from './openapi-components'

/** A valibot schema as JSON Schema 2020-12 (also the MCP tool inputs, server/http/mcp/tools.ts). */
export const jsonSchema = (s: v.GenericSchema) => {
  const out = toJsonSchema(s, { errorMode: 'ignore', target: 'draft-2020-12' }) as Record<string, unknown>
  delete out.$schema
  return out
}

type Json = Record<string, any>

/** A digits-only pattern (`^\\d{1,6}$`, `^\\d{3}$`): the query text of a non-negative integer. */
const DIGITS = /^\^\\d(\{\d+(,\d+)?\}|\+)\$$/

/**
 * A query parameter typed as what it means: the schemas read text (every query value arrives as a string),
 * so a digits-only string is an integer and the picklist true/false a boolean; minimum and maximum come
 * from the schema's metadata (Limit), the default is the number. Repeatable keys are arrays of those scalars.
 */
export function queryParamSchema(schema: Json): Json {
  if (schema.type === 'array') return { ...schema, items: queryParamSchema(schema.items ?? {}) }
  const { pattern, enum: values, default: fallback, ...rest } = schema
  if (schema.type === 'string' && typeof pattern === 'string' && DIGITS.test(pattern))
    return {
      ...rest,
      type: 'integer',
      minimum: rest.minimum ?? 0,
      ...(fallback !== undefined ? { default: Number(fallback) } : {}),
    }
  if (
    schema.type === 'string' &&
    Array.isArray(values) &&
    values.length === 2 &&
    values.every((x) => x === 'true' || x === 'false')
  )
    return { ...rest, type: 'boolean', ...(fallback !== undefined ? { default: fallback === 'true' } : {}) }
  return schema
}

/** Ids the contract names by prefix (contract "Conventions": the id table), as response patterns. */
const ID_PATTERNS: Record<string, string> = {
  agent_id: '^agt_\\d+$',
  account_id: '^acc_\\d+$',
  user_id: '^usr_\\d+$',
  conversation_id: '^conv_[pud]\\d+$',
  call_id: '^call_\\d+$',
  key_id: '^key_\\d+$',
  endpoint_id: '^whk_\\d+$',
  delivery_id: '^dlv_[A-Za-z0-9_]+$',
  doc_id: '^doc_[fc]\\d+$',
  prompt_version_id: '^pv_\\d+$',
  dnc_id: '^dnc_\\d+$',
  profile_id: '^prf_\\d+$',
}

/** Adds the id patterns to a response schema's `<x>_id` string properties (in place, recursively). */
function withIdPatterns(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return
  const s = schema as Json
  for (const [name, p] of Object.entries((s.properties ?? {}) as Json)) {
    const pattern = ID_PATTERNS[name]
    if (pattern && p.type === 'string' && !p.pattern && !p.enum && p.const === undefined) p.pattern = pattern
    const nullable = (p.anyOf ?? []).find((o: Json) => o.type === 'string')
    if (pattern && nullable && !nullable.pattern && !nullable.enum) nullable.pattern = pattern
  }
  for (const value of Object.values(s)) {
    if (Array.isArray(value)) value.forEach(withIdPatterns)
    else if (value && typeof value === 'object') withIdPatterns(value)
  }
}

const COMPONENT_REF = (name: string) => `#/components/schemas/${name}`

/**
 * Response schemas: the ones several operations return (the response, or a list's item) become components,
 * by their export name in the domain schema modules (openapi-components.ts); the rest stay inline.
 */
function responseConverter(entries: RouteEntry[]) {
  const uses = new Map<v.GenericSchema, number>()
  const count = (s: v.GenericSchema | undefined) => s && uses.set(s, (uses.get(s) ?? 0) + 1)
  for (const { meta } of entries) {
    if (!meta?.response) continue
    count(meta.response)
    const data = (meta.response as any).entries?.data
    if (data?.type === 'array') count(data.item)
  }
  const definitions: Record<string, v.GenericSchema> = {}
  for (const [schema, n] of uses) {
    const name = SCHEMA_NAMES.get(schema)
    if (n >= 2 && name) definitions[name] = schema
  }
  const options = {
    errorMode: 'ignore' as const,
    target: 'draft-2020-12' as const,
    definitions,
    overrideRef: ({ referenceId }: { referenceId: string }) => COMPONENT_REF(referenceId),
  }
  const components = toJsonSchemaDefs(definitions, options) as Record<string, Json>
  for (const c of Object.values(components)) withIdPatterns(c)
  return {
    components,
    convert(s: v.GenericSchema): Json {
      const out = toJsonSchema(s, options) as Json
      delete out.$schema
      delete out.$defs
      withIdPatterns(out)
      return out
    },
  }
}

const META_REF = { $ref: COMPONENT_REF('Meta') }
const PAGINATION_REF = { $ref: COMPONENT_REF('Pagination') }

/**
 * The 2xx envelope around a payload schema: a list (data[], pagination, meta) or a single object plus meta.
 * A payload with a top-level data array is a list (asList), except on a raw route without a cursor: a report
 * that writes its own single envelope (GET /accounts/{acc}/usage, GET /metrics/conversations).
 */
function enveloped(payload: Json, resolve: (ref: string) => Json | undefined, meta: ApiRouteMeta): Json {
  const shape = payload.$ref ? resolve(payload.$ref) : payload
  const paged = !meta.raw || 'cursor' in ((meta.query as { entries?: object } | undefined)?.entries ?? {})
  const isList = paged && shape?.type === 'object' && shape.properties?.data?.type === 'array'
  if (isList)
    return {
      ...shape,
      required: [...new Set([...(shape.required ?? []), 'data', 'pagination', 'meta'])],
      properties: { ...shape.properties, pagination: PAGINATION_REF, meta: META_REF },
    }
  if (payload.type === 'object' && !payload.$ref)
    return {
      ...payload,
      required: [...new Set([...(payload.required ?? []), 'meta'])],
      properties: { ...(payload.properties ?? {}), meta: META_REF },
    }
  return { allOf: [payload, { type: 'object', required: ['meta'], properties: { meta: META_REF } }] }
}

const ErrorEnvelope = {
  type: 'object',
  required: ['error', 'meta'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'field', 'request_id'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: ['string', 'null'] },
        request_id: { type: 'string' },
      },
    },
    meta: { $ref: '#/components/schemas/Meta' },
  },
}

export const toOpenApiPath = (route: string) => route.replace(/^\/v1/, '').replace(/:(\w+)/g, '{$1}') || '/'

/** Dashboard routes live on the origin under /api/…, outside the /v1 servers (decisions "Dashboard origin"). */
const isDashboardPath = (p: string) => p.startsWith('/api/')
/** The OAuth endpoints and discovery documents also live on the origin root (decisions "MCP and OAuth paths"). */
const isOriginPath = (p: string) => p.startsWith('/oauth/') || p.startsWith('/.well-known/')

const ACCOUNT_TEXT =
  'The account the request acts for (contract "Account resolution"): account_id in the query, else in a POST body, else X-Svc-Account, else the home account of the credential. An account not on the credential is 403 forbidden_account.'

/** account_id as a JSON body property, added where the pipeline takes it from a POST body (every option of a union). */
function withAccountProperty(schema: Record<string, any>): Record<string, any> {
  const property = { ...jsonSchema(AccountId), description: ACCOUNT_TEXT }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: schema.anyOf.map(withAccountProperty) }
  if (schema.type !== 'object') return schema
  return { ...schema, properties: { ...(schema.properties ?? {}), [ACCOUNT_KEY]: property } }
}

const IDEMPOTENCY_ERRORS = ['idempotency_key_reused', 'idempotency_key_in_use', 'idempotency_answer_lost']
const EMPTY_BODY = { type: 'object', properties: {}, additionalProperties: false }
const accountBody = (schema: Record<string, any>, add: boolean) => (add ? withAccountProperty(schema) : schema)

const OAuthErrorSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
}

/** A repeatable key's schema: already an array when the route's query schema reads a list. */
const asArray = (s: Json): Json => (s.type === 'array' ? s : { type: 'array', items: s })

export function buildOpenApi(entries: RouteEntry[], origin: string) {
  const responseSchemas = responseConverter(entries)
  const resolve = (ref: string) => responseSchemas.components[ref.replace(COMPONENT_REF(''), '')]
  const paths: Record<string, Record<string, unknown>> = {}
  const tags = new Set<string>()
  const rootPaths = new Set<string>()
  for (const { path, method, meta } of entries) {
    if (!meta) continue
    const p = toOpenApiPath(path)
    const m = method === 'ALL' ? 'get' : method.toLowerCase()
    for (const t of meta.tags ?? ['Other']) tags.add(t)
    const isPublic = meta.auth === 'public'
    const isSession = meta.auth === 'session'
    const isWidget = meta.auth === 'widget'
    const parameters: unknown[] = []
    const paramNames = [...path.matchAll(/:(\w+)/g)].map((x) => x[1])
    const paramEntries = (meta.params as any)?.entries ?? {}
    for (const name of paramNames)
      parameters.push({
        name,
        in: 'path',
        required: true,
        schema: paramEntries[name] ? jsonSchema(paramEntries[name]) : { type: 'string' },
      })
    const queryEntries = (meta.query as any)?.entries ?? {}
    for (const [name, schema] of Object.entries(queryEntries)) {
      const s = schema as v.GenericSchema
      const repeat = meta.repeatable?.includes(name)
      parameters.push({
        name,
        in: 'query',
        required: !(s.type === 'optional' || s.type === 'nullish'),
        ...(repeat
          ? { schema: queryParamSchema(asArray(jsonSchema(s))), style: 'form', explode: true }
          : { schema: queryParamSchema(jsonSchema(s)) }),
      })
    }
    // Data routes: the account_id the pipeline takes itself (unless the route's query declares it) and the header.
    if (takesAccountId(meta, 'query', method))
      parameters.push({
        name: ACCOUNT_KEY,
        in: 'query',
        required: false,
        schema: jsonSchema(AccountId),
        description: ACCOUNT_TEXT,
      })
    if (meta.dataRoute)
      parameters.push({
        name: 'X-Svc-Account',
        in: 'header',
        required: false,
        schema: jsonSchema(AccountId),
        description: `${ACCOUNT_TEXT} Required for the master key.`,
      })
    const bodyAccount = takesAccountId(meta, 'body', method)
    if (isWidget) {
      parameters.push(
        { name: 'Origin', in: 'header', required: true, schema: { type: 'string' } },
        ...(paramNames.includes('conv')
          ? [{ name: 'X-Svc-Visitor-Token', in: 'header', required: true, schema: { type: 'string' } }]
          : []),
      )
    }
    const idempotent = !isPublic && !isSession && m === 'post' && !meta.raw
    if (idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        description:
          'Makes the POST safe to retry for 24 hours: the same key and body replay the stored answer with Idempotent-Replayed: true; another body is 409 idempotency_key_reused; a repeat while the first runs is 409 idempotency_key_in_use. 5xx answers are not stored, unless the request had saved a change before failing or its server stopped after saving it: then a repeat is 409 idempotency_answer_lost and the request is never run twice.',
      })
    }
    const bodyErrors =
      meta.body || bodyAccount
        ? ['invalid_json', 'unsupported_field', 'validation_error', 'unsupported_media_type', 'payload_too_large']
        : []
    const errorCodes = isPublic
      ? [...bodyErrors, ...(meta.errors ?? []), 'internal_error']
      : isWidget
        ? [
            'invalid_widget_token',
            'origin_not_allowed',
            'rate_limited',
            ...bodyErrors,
            ...(meta.errors ?? []),
            ...(idempotent ? IDEMPOTENCY_ERRORS : []),
            'internal_error',
          ]
        : [
            ...(isSession
              ? ['missing_credentials', 'invalid_credentials', 'account_suspended', 'ip_not_allowed', 'rate_limited']
              : [
                  'missing_credentials',
                  'invalid_credentials',
                  'expired_token',
                  'account_suspended',
                  'insufficient_scope',
                  'forbidden_account',
                  'ip_not_allowed',
                  'rate_limited',
                ]),
            ...bodyErrors,
            ...(meta.patch ? ['empty_update'] : []),
            ...(Object.keys(queryEntries).length || !meta.body ? ['unsupported_filter'] : []),
            ...(meta.errors ?? []),
            ...(idempotent ? IDEMPOTENCY_ERRORS : []),
            'internal_error',
          ]
    const byStatus = new Map<number, string[]>()
    for (const code of new Set(errorCodes)) {
      const status = isErrorCode(code) ? statusOf(code) : 400
      byStatus.set(status, [...(byStatus.get(status) ?? []), code])
    }
    const success = String(meta.status ?? 200)
    const responses: Record<string, unknown> = {
      [success]:
        success === '204'
          ? { description: 'No content' }
          : {
              description: 'Success',
              content: {
                'application/json': {
                  schema: meta.response
                    ? meta.errorFormat === 'oauth'
                      ? responseSchemas.convert(meta.response)
                      : enveloped(responseSchemas.convert(meta.response), resolve, meta)
                    : { type: 'object' },
                  ...(meta.example ? { example: meta.example } : {}),
                },
              },
            },
    }
    for (const other of meta.otherStatuses ?? [])
      responses[String(other)] = { ...(responses[success] as Json), description: `Success (${other})` }
    if (meta.errorFormat === 'oauth') byStatus.clear()
    for (const code of meta.errorFormat === 'oauth' ? [...(meta.errors ?? []), 'server_error'] : []) {
      const status = OAUTH_ERROR_STATUS[code as OAuthErrorCode] ?? 400
      byStatus.set(status, [...(byStatus.get(status) ?? []), code])
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      if (meta.errorFormat === 'oauth') {
        responses[String(status)] = {
          description: `RFC 6749 error: ${codes.map((c) => `\`${c}\``).join(', ')}`,
          content: {
            'application/json': {
              schema: OAuthErrorSchema,
              example: { error: codes[0], error_description: codes[0].replace(/_/g, ' ') },
            },
          },
        }
        continue
      }
      responses[String(status)] = {
        description: codes.map((c) => `\`${c}\`${isErrorCode(c) ? `: ${ERROR_CODES[c][1]}` : ''}`).join('; '),
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: errorExample(codes[0]) },
        },
      }
    }
    const rateClass =
      typeof meta.rateClass === 'object'
        ? meta.rateClass.classes.join('` or `')
        : (meta.rateClass ?? (m === 'get' ? 'read' : 'write'))
    const scopeText = isPublic
      ? meta.rateSubjects
        ? `Public: no API credential, not audited. Rate class: \`${rateClass}\`.`
        : 'Public: no credential, unmetered, not audited.'
      : isWidget
        ? "Widget: the agent's public token in `X-Svc-Widget-Token` and an `Origin` in its allowed_domains (CORS for that Origin only); API keys are refused (401 `invalid_widget_token`). Rate limits per client IP (`widget_ip`) and per token (`widget_token`). Not audited."
        : isSession
          ? `Dashboard session: cookie \`svc_session\` or \`Authorization: Session <token>\`; API keys are refused (401). Rate class: \`${rateClass}\`. Audited as credential_type \`session\`.`
          : `Scope: \`${[meta.scope, ...(meta.anyScope ?? [])].filter(Boolean).join('` or `') || 'any credential'}\`. Rate class: \`${rateClass}\`.`
    paths[p] ??= isDashboardPath(p)
      ? { servers: [{ url: origin, description: 'Dashboard origin' }] }
      : isOriginPath(path)
        ? { servers: [{ url: origin, description: 'Service origin' }] }
        : {}
    // A route outside /v1 and /api (the MCP connector at /mcp) is served on the origin root; when the
    // same operation is also under /v1 the path item lists both bases.
    if (!path.startsWith('/v1/') && path !== '/v1' && !isDashboardPath(p) && !isOriginPath(path)) rootPaths.add(p)
    paths[p][m] = {
      operationId: operationId(m, p),
      summary: meta.summary,
      description: [meta.description, scopeText].filter(Boolean).join('\n\n'),
      tags: meta.tags ?? ['Other'],
      security: isPublic
        ? []
        : isWidget
          ? [{ widgetToken: [] }]
          : isSession
            ? [{ sessionAuth: [] }, { sessionHeader: [] }]
            : [{ bearerAuth: meta.scope ? [meta.scope] : [] }],
      'x-scope': isPublic || isSession ? null : (meta.scope ?? null),
      'x-rate-class': isPublic && !meta.rateSubjects ? null : isWidget ? 'widget_ip, widget_token' : rateClass,
      ...(parameters.length ? { parameters } : {}),
      ...(meta.body || bodyAccount
        ? {
            requestBody: {
              required: !!meta.body && !meta.patch,
              content: {
                [meta.requestType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: {
                  schema: accountBody(meta.body ? jsonSchema(meta.body as v.GenericSchema) : EMPTY_BODY, bodyAccount),
                },
                ...(meta.multipart
                  ? {
                      'multipart/form-data': {
                        schema: accountBody(
                          meta.multipartBody ? jsonSchema(meta.multipartBody) : { type: 'object' },
                          bodyAccount,
                        ),
                      },
                    }
                  : {}),
              },
            },
          }
        : {}),
      responses: meta.responses ?? responses,
    }
  }
  for (const p of rootPaths) {
    const v1 = entries.some((e) => e.meta && e.path.startsWith('/v1/') && toOpenApiPath(e.path) === p)
    paths[p].servers = [
      { url: origin, description: 'Origin root (canonical)' },
      ...(v1 ? [{ url: `${origin}/v1` }, { url: `${origin}/api/v1`, description: 'Fallback base path' }] : []),
    ]
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Conversational Agent Service API',
      version: VERSION,
      summary: 'Multi-tenant server-to-server API hosting AI agents for phone, web chat and voice chat.',
      description:
        'Contract 1.0.0-draft. Every response carries X-Request-Id and Cache-Control: no-store; every non-2xx uses the error envelope.',
    },
    servers: [{ url: `${origin}/v1` }, { url: `${origin}/api/v1`, description: 'Fallback base path' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'svc_mk_live_… master key, svc_sk_live_… personal key or svc_at_… OAuth access token',
        },
        sessionAuth: {
          type: 'apiKey',
          in: 'cookie',
          name: 'svc_session',
          description: 'Dashboard session cookie set by POST /api/auth/login or a login link',
        },
        widgetToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Svc-Widget-Token',
          description: "The agent's widget public token (wpk_…), from GET /agents/{agt}/widget",
        },
        sessionHeader: {
          type: 'http',
          scheme: 'Session',
          description: 'The same svc_ses_… session token as Authorization: Session <token>',
        },
      },
      schemas: {
        ...responseSchemas.components,
        Meta: {
          type: 'object',
          required: ['request_id', 'environment'],
          properties: {
            request_id: { type: 'string' },
            environment: { const: 'production' },
            applied_default_range: {
              type: 'boolean',
              description: 'Dated lists and reports: true when the default window applied',
            },
            group_by: { type: 'string', description: 'Reports: the grouping applied' },
            currency_code: { type: 'string', description: 'Usage report: the currency of cost figures' },
            // null where the window is open on that side (GET /agent-versions without from or to).
            from: { type: ['string', 'null'], format: 'date-time' },
            to: { type: ['string', 'null'], format: 'date-time' },
          },
        },
        Error: ErrorEnvelope,
        Pagination: {
          type: 'object',
          required: ['limit', 'has_more', 'next_cursor'],
          properties: {
            limit: { type: 'integer' },
            has_more: { type: 'boolean' },
            next_cursor: { type: ['string', 'null'] },
          },
        },
      },
    },
  }
}

function errorExample(code: string) {
  return {
    error: {
      code,
      message: isErrorCode(code) ? ERROR_CODES[code][1] : code.replace(/_/g, ' '),
      field: null,
      request_id: 'req_example',
    },
    meta: { request_id: 'req_example', environment: 'production' },
  }
}

function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_'))
  return [method, ...words].join('_')
}
