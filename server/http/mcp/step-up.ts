// Scope step-up (MCP 2025-11-25 "Scope Challenge Handling"; issue 34). An OAuth connection calling a tool
// whose scope its token lacks is answered before the tool runs with HTTP 403 and
//   WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"
// so the client re-authorizes with the wider scope. Consent mints a new connection key with the approved
// scopes (domain/oauth/authorize.ts approve), so re-authorization really does widen what the client holds.
// A personal key cannot be widened by any authorization, so it keeps the tool error (dispatch.ts).
import { resourceMetadataUrl } from '~/domain/oauth/metadata'
import { CONNECTION_SCOPES } from '~/domain/oauth/guard'
import type { Principal } from '~/domain/credentials/principal'
import type { Scope } from '~/domain/credentials/scopes'
import type { Tool } from './tools'

export interface ScopeChallenge {
  tool: string
  /** The scope the tool needs that the token lacks. */
  missing: Scope
  /** What the client should ask for: the token's scopes plus the missing one, sorted. */
  scope: string
}

/** Whether a re-authorization can give this principal one of the tool's scopes. */
function stepUpFor(principal: Principal, tool: Tool): Scope | null {
  if (principal.type !== 'oauth' || tool.scopes.length === 0) return null
  if (tool.scopes.some((s) => principal.scopes.has(s))) return null
  // The route's own scope first (its alternatives are broader ones, e.g. a write scope for a read).
  return tool.scopes.find((s) => CONNECTION_SCOPES.includes(s)) ?? null
}

/** Tools an OAuth connection may ask for by re-authorizing are listed too, so a model can reach them. */
export const listableBy = (principal: Principal, tool: Tool) =>
  tool.scopes.length === 0 || tool.scopes.some((s) => principal.scopes.has(s)) || stepUpFor(principal, tool) !== null

/**
 * The challenge for the first tools/call in a POST body (one message, or a batch, which the SDK still
 * accepts) that needs a scope the OAuth token lacks; null when there is none or the body is not JSON
 * (the transport answers -32700 for that). The scope set is the spec's "recommended approach": the
 * token's scopes plus the missing one, because SDK 1.x clients replace their requested scope with the
 * challenge's rather than adding to it, and would otherwise lose what they hold.
 */
export function scopeChallenge(body: string | undefined, principal: Principal, tools: Tool[]): ScopeChallenge | null {
  if (principal.type !== 'oauth' || !body) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return null
  }
  const byName = new Map(tools.map((t) => [t.spec.name, t]))
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null
    if (m?.method !== 'tools/call' || typeof m.params?.name !== 'string') continue
    const tool = byName.get(m.params.name)
    if (!tool) continue
    const missing = stepUpFor(principal, tool)
    if (!missing) continue
    const scope = [...new Set([...principal.scopes, missing])].sort().join(' ')
    return { tool: tool.spec.name, missing, scope }
  }
  return null
}

/** RFC 6750 §3 challenge, every value quoted (the SDK's parser needs quotes), error first as in the spec. */
export function insufficientScopeHeader(origin: string, resourcePath: string, c: ScopeChallenge): string {
  return [
    `Bearer error="insufficient_scope"`,
    `scope="${c.scope}"`,
    `resource_metadata="${resourceMetadataUrl(origin, resourcePath)}"`,
    `error_description="The tool ${c.tool} needs the scope ${c.missing}; authorize again to grant it."`,
  ].join(', ')
}
