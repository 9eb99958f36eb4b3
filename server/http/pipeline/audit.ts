// Step: one audit row per metered request, success or failure, written after the response (batched by
// the audit writer). The factories say who the request acted as once that is known; the row takes it
// when the response finishes, so a request refused early is audited too.
import type { H3Event } from 'h3'
import type { AccountScope } from '~/domain/accounts/resolve'
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

/** An API request: the credential and the resolved account, or the credential's home account. */
export function auditedCredential(event: H3Event): AuditedAs {
  const principal = event.context.principal as Principal | null | undefined
  const account = event.context.account as AccountScope | null | undefined
  return {
    credentialType: principal?.type ?? null,
    credentialId: principal?.credentialId ?? null,
    accountIds: account?.ids ?? (principal?.homeAccountId ? [principal.homeAccountId] : []),
    crossAccount: principal?.type === 'master',
  }
}
