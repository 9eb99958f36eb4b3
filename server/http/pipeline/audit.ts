// Step: one audit row per metered request, success or failure, written after the response (batched by
// the audit writer). The factories say who the request acted as once that is known; the row takes it
// when the response finishes, so a request refused early is audited too.
import type { H3Event } from 'h3'
import { normaliseAccountId, type AccountScope } from '~/domain/accounts/resolve'
import type { Principal } from '~/domain/credentials/principal'
import type { Runtime } from '~/kit/runtime'
import { clientIp } from '../client-ip'
import { requestedPath } from './path'

export interface AuditedAs {
  credentialType: string | null
  credentialId: string | null
  accountIds: string[]
  crossAccount: boolean
}

export function auditOnFinish(event: H3Event, runtime: Runtime, who: () => AuditedAs) {
  const started = Date.now()
  const path = requestedPath(event)
  event.node.res.once('finish', () => {
    runtime.audit.record({
      requestId: event.context.requestId,
      ...who(),
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

/**
 * A request that acted on other tenants' accounts without naming them (a partner creating, reading or
 * issuing keys and links for its members): its audit row lists those accounts and is cross_account.
 */
export function auditCrossAccount(event: H3Event, accountIds: readonly string[]) {
  const seen = (event.context.crossAccountIds as string[] | undefined) ?? []
  event.context.crossAccountIds = [...new Set([...seen, ...accountIds])]
}

/**
 * A partner key naming one of its members' tenants in the path (/accounts/{acc}/…, /users/{usr}/…,
 * /partners/members/{usr}): the row is the member's account's, cross_account.
 */
export function auditMemberParams(event: H3Event, principal: Principal, params: unknown) {
  const members = principal.memberAccountIds
  if (!members?.length || !params || typeof params !== 'object') return
  const named = [(params as Record<string, unknown>).acc, (params as Record<string, unknown>).usr]
    .filter((x): x is string => typeof x === 'string')
    .map((id) => normaliseAccountId(id))
    .filter((id): id is string => !!id && members.includes(id))
  if (named.length) auditCrossAccount(event, named)
}

/**
 * An API request: the credential and the resolved account, or the credential's home account. The master
 * key, and a partner key acting for its members' accounts, are cross_account.
 */
export function auditedCredential(event: H3Event): AuditedAs {
  const principal = event.context.principal as Principal | null | undefined
  const account = event.context.account as AccountScope | null | undefined
  const crossIds = event.context.crossAccountIds as string[] | undefined
  return {
    credentialType: principal?.type ?? null,
    credentialId: principal?.credentialId ?? null,
    accountIds: crossIds ?? account?.ids ?? (principal?.homeAccountId ? [principal.homeAccountId] : []),
    crossAccount: principal?.type === 'master' || !!crossIds || !!account?.crossAccount,
  }
}
