// POST /mcp and POST /v1/mcp: MCP 2025-11-25 over streamable HTTP, stateless, JSON responses (decisions
// "MCP and OAuth paths"; notes §6). Authentication is the REST one (same resolvers, failed-attempt
// limit, IP allow-list); its failures answer the RFC 9728 / RFC 6750 challenge that starts a client's
// OAuth flow. Answers are JSON-RPC, never the REST envelope. The tool calls inside are REST requests
// (dispatch.ts) and are audited there; the MCP exchange itself (initialize, tools/list) is not.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { defineEventHandler, getHeader, getRequestURL, readRawBody, setResponseHeader, type H3Event } from 'h3'
import * as v from 'valibot'
import { JsonRecord } from '~/lib/schemas'
import { authenticateRequest, warnOfExpiry } from '~/http/pipeline/guards'
import type { ApiRouteMeta } from '~/http/route-meta'
import { ApiError, toApiError } from '~/lib/errors'
import { clientIp } from '~/http/client-ip'
import { useRuntime } from '~/kit/runtime'
import { ipAllowed } from '~/lib/ip'
import { bearerChallenge } from '~/domain/oauth/metadata'
import { publicOrigin } from '~/http/public-origin'
import type { Principal } from '~/domain/credentials/principal'
import { jsonRpcError } from './jsonrpc'
import { createMcpServer } from './server'
import { mcpScopes, mcpTools } from './tools'
import { insufficientScopeHeader, scopeChallenge } from './step-up'

export type McpPath = '/mcp' | '/v1/mcp'

async function challenge(event: H3Event, path: McpPath, error?: { code: 'invalid_token'; description: string }) {
  const origin = publicOrigin(event, useRuntime().config)
  const scope = (await mcpScopes()).join(' ')
  setResponseHeader(
    event,
    'WWW-Authenticate',
    bearerChallenge(origin, path, { scope, error: error?.code, description: error?.description }),
  )
}

/** The master key is an operator credential, not an account one: an assistant connects as an account. */
const MASTER_REFUSED =
  'The master key is not accepted on the MCP connector; connect with a personal key or through OAuth.'

async function authenticateMcp(event: H3Event, path: McpPath): Promise<Principal | { answer: unknown }> {
  const runtime = useRuntime()
  let principal: Principal
  try {
    principal = await authenticateRequest(event, runtime)
  } catch (e) {
    const api = toApiError(e)
    if (api.status !== 401) {
      for (const [k, v] of Object.entries(api.headers)) setResponseHeader(event, k, v)
      return { answer: jsonRpcError(event, api.status, api.message, { code: api.code }) }
    }
    // RFC 6750 §3.1: no error code when the request carried no credential at all.
    await challenge(
      event,
      path,
      api.code === 'missing_credentials' ? undefined : { code: 'invalid_token', description: api.message },
    )
    return { answer: jsonRpcError(event, 401, api.message, { code: api.code }) }
  }
  if (principal.type === 'master') {
    await challenge(event, path, { code: 'invalid_token', description: MASTER_REFUSED })
    return { answer: jsonRpcError(event, 401, MASTER_REFUSED, { code: 'invalid_credentials' }) }
  }
  if (!ipAllowed(clientIp(event), principal.ipAllowlist)) {
    return {
      answer: jsonRpcError(event, 403, 'This key does not accept requests from your IP address.', {
        code: 'ip_not_allowed',
      }),
    }
  }
  warnOfExpiry(event, principal)
  return principal
}

export async function handleMcp(event: H3Event, path: McpPath) {
  const auth = await authenticateMcp(event, path)
  if ('answer' in auth) return auth.answer
  const principal = auth
  const tools = await mcpTools()
  // Middleware 02 has already read (and capped) the body.
  const raw = (await readRawBody(event, false))?.toString('utf8')
  const stepUp = scopeChallenge(raw, principal, tools)
  if (stepUp) {
    const origin = publicOrigin(event, useRuntime().config)
    setResponseHeader(event, 'WWW-Authenticate', insufficientScopeHeader(origin, path, stepUp))
    return jsonRpcError(event, 403, `The tool ${stepUp.tool} needs the scope ${stepUp.missing}.`, {
      code: 'insufficient_scope',
      scope: stepUp.scope,
    })
  }
  const server = createMcpServer(tools, principal, {
    authorization: getHeader(event, 'authorization')!,
    ip: clientIp(event),
    requestId: event.context.requestId as string,
    userAgent: getHeader(event, 'user-agent'),
    homeAccountId: principal.homeAccountId,
  })
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    // The transport parses the body and answers 400/-32700 for invalid JSON, 406 for a wrong Accept and
    // 415 for a wrong Content-Type itself.
    const headers = new Headers()
    for (const [k, v] of Object.entries(event.node.req.headers)) if (typeof v === 'string') headers.set(k, v)
    const request = new Request(getRequestURL(event), { method: 'POST', headers, body: raw })
    return await transport.handleRequest(request)
  } catch (e) {
    if (e instanceof ApiError) throw e
    console.error(`[mcp] ${event.context.requestId}:`, e instanceof Error ? e.stack : e)
    return jsonRpcError(event, 500, 'Internal error. Quote the request id when you report it.', {
      code: 'internal_error',
      request_id: event.context.requestId,
    })
  } finally {
    await transport.close().catch(() => {})
    await server.close().catch(() => {})
  }
}

const JsonRpcRequest = v.looseObject({
  jsonrpc: v.literal('2.0'),
  id: v.optional(v.union([v.string(), v.number()])),
  method: v.pipe(v.string(), v.description('initialize, notifications/initialized, tools/list, tools/call, ping')),
  params: v.optional(JsonRecord(v.string(), v.unknown())),
})

const jsonRpcAnswer = (description: string, example?: unknown) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['jsonrpc'],
        properties: {
          jsonrpc: { const: '2.0' },
          id: { type: ['string', 'integer', 'null'] },
          result: { type: 'object' },
          error: { type: 'object' },
        },
      },
      ...(example ? { example } : {}),
    },
  },
})

/** What the OpenAPI document says about the connector (it reads the options defineApiRoute would attach). */
export const MCP_ROUTE_META: ApiRouteMeta = {
  summary: 'MCP connector (streamable HTTP)',
  description: [
    'Model Context Protocol 2025-11-25 over streamable HTTP for AI assistants: stateless (no Mcp-Session-Id), JSON responses, one JSON-RPC message per POST.',
    'Canonical URL <origin>/mcp; <origin>/v1/mcp is the same handler. Send Accept: application/json, text/event-stream (406 otherwise) and Content-Type: application/json (415 otherwise).',
    'GET, DELETE and other methods answer 405 with Allow: POST. Authorization: Bearer with a personal key or an OAuth access token (svc_at_…); the master key is refused.',
    'Without a valid token: 401 with WWW-Authenticate: Bearer resource_metadata="<origin>/.well-known/oauth-protected-resource/mcp", scope="…" (plus error="invalid_token" for a bad, expired or revoked token).',
    'Each tool is one REST operation of this document called with the same credential: same scope, validation, quotas, rate limits and audit row; a REST error comes back as a tool result with isError and error {code, message, field}.',
    'An OAuth access token calling a tool whose scope it lacks gets HTTP 403 with WWW-Authenticate: Bearer error="insufficient_scope", scope="<its scopes plus the missing one>", resource_metadata="…" (step-up: authorize again with that scope); a personal key gets the tool error instead, since no authorization can widen it.',
    "tools/list shows, in a fixed order, the tools the credential's scopes allow, and for an OAuth token also those a re-authorization could grant. Every tool has a title and the annotations readOnlyHint, destructiveHint, idempotentHint and openWorldHint.",
  ].join('\n\n'),
  tags: ['MCP'],
  raw: true,
  body: JsonRpcRequest,
  responses: {
    200: jsonRpcAnswer('JSON-RPC response', { jsonrpc: '2.0', id: 1, result: { tools: [] } }),
    202: { description: 'A notification or response was accepted (no body)' },
    400: jsonRpcAnswer('Invalid JSON (-32700), invalid JSON-RPC message (-32600) or unsupported MCP-Protocol-Version'),
    401: jsonRpcAnswer('No, unknown, expired or revoked token, or the master key; see WWW-Authenticate'),
    403: jsonRpcAnswer(
      'Source IP outside the key ip_allowlist (data.code ip_not_allowed), or an OAuth token calling a tool whose scope it lacks (data.code insufficient_scope; see WWW-Authenticate)',
    ),
    405: jsonRpcAnswer('Not POST; Allow: POST'),
    406: jsonRpcAnswer('Accept lacks application/json or text/event-stream'),
    413: jsonRpcAnswer('Body above 2 MB'),
    415: jsonRpcAnswer('Content-Type is not application/json'),
    429: jsonRpcAnswer('Too many failed authentications from this IP; see Retry-After'),
  },
}

/** The route handler, carrying the OpenAPI options under the same property defineApiRoute uses. */
export const mcpRoute = (path: McpPath) =>
  Object.assign(
    defineEventHandler((event) => handleMcp(event, path)),
    { __api: MCP_ROUTE_META },
  )
