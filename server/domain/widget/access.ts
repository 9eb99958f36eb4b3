// Who may call the public widget API: the agent whose public_token the request carries, from an Origin
// listed in that agent's allowed_domains. The token is looked up on every request (no cache), so a
// regenerated token stops the old one at once on every instance.
import { sql } from 'drizzle-orm'
import { rowsOf, type Database } from '~/db/client'
import { agentByPublicToken } from '~/domain/agents/widget'
import type { AgentRow } from '~/domain/agents/agents'
import { apiError } from '~/lib/errors'

/** Tokens are minted as `wpk_` + 32 base64url characters; anything else is refused without a query. */
const TOKEN_SHAPE = /^wpk_[A-Za-z0-9_-]{32}$/

export const invalidWidgetToken = (message = 'Send the agent widget public token in X-Svc-Widget-Token.') =>
  apiError('invalid_widget_token', message)
export const originNotAllowed = () =>
  apiError('origin_not_allowed', "This Origin is not in the agent's allowed_domains.")

/** The agent a widget token belongs to, or 401 invalid_widget_token (missing, malformed, unknown or replaced). */
export async function widgetAgent(database: Database, token: string | undefined): Promise<AgentRow> {
  if (!token || !TOKEN_SHAPE.test(token)) throw invalidWidgetToken()
  const agent = await agentByPublicToken(database, token)
  if (!agent) throw invalidWidgetToken('The widget token is unknown or was regenerated.')
  return agent
}

/** The host of an http(s) Origin header, lower-cased, or null (no Origin, `null`, another scheme, a path). */
export function originHost(origin: string | undefined): string | null {
  if (!origin || origin.length > 300) return null
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  // An Origin is scheme://host[:port] and nothing else.
  if (url.origin.toLowerCase() !== origin.toLowerCase()) return null
  return url.hostname.toLowerCase()
}

/** The allowed_domains entries that would admit `host`: itself and `*.` of each parent domain. */
export function entriesAdmitting(host: string): string[] {
  const labels = host.split('.')
  const out = [host]
  for (let i = 1; i < labels.length; i++) out.push(`*.${labels.slice(i).join('.')}`)
  return out
}

/** An entry `example.com` admits exactly that host; `*.example.com` admits any subdomain of it (not itself). */
export function originAllowed(origin: string | undefined, allowedDomains: readonly string[]): boolean {
  const host = originHost(origin)
  if (!host) return false
  const admitting = new Set(entriesAdmitting(host))
  return allowedDomains.some((d) => admitting.has(d))
}

/**
 * A preflight carries no X-Svc-Widget-Token (browsers send header names, not values), so it is answered
 * for an Origin that some agent with a live token allows; the request itself is then checked against
 * its own agent's list.
 */
export async function someAgentAllows(database: Database, origin: string | undefined): Promise<boolean> {
  const host = originHost(origin)
  if (!host) return false
  const entries = entriesAdmitting(host)
  const rows = rowsOf<{ ok: number }>(
    await database.db.execute(sql`SELECT 1 AS ok FROM agents
      WHERE public_token IS NOT NULL
        AND jsonb_exists_any(allowed_domains, ARRAY[${sql.join(
          entries.map((e) => sql`${e}`),
          sql`, `,
        )}]::text[])
      LIMIT 1`),
  )
  return rows.length > 0
}
