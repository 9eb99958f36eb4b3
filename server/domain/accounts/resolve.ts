// Account resolution runs before any query (contract, "Account resolution"): query account_id, then
// body account_id, then X-Svc-Account, then the credential's home account. Any requested account not on
// the credential rejects the whole request with 403 forbidden_account.
import type { Database } from '~/db/client'
import { Errors } from '~/lib/errors'
import type { Principal } from '~/domain/credentials/principal'
import { refuseSuspendedAccount } from '~/domain/credentials/keys'
import { accountRow } from './accounts'

export interface AccountScope {
  /** The account the request acts for. */
  id: string | null
  /** Every account the request named (query account_id may repeat). */
  ids: string[]
  /** True when the master key acts for an account, or a partner key for a member's (audit cross_account). */
  crossAccount: boolean
}

const ACCOUNT_ID = /^(acc|usr)_(\d{1,18})$/

/** usr_7 and acc_7 name the same tenant. */
export function normaliseAccountId(id: string): string | null {
  const m = ACCOUNT_ID.exec(id)
  return m ? `acc_${m[2]}` : null
}

export async function resolveAccount(
  database: Database,
  principal: Principal,
  req: { queryAccountIds: string[]; bodyAccountId?: string; header?: string; dataRoute: boolean },
): Promise<AccountScope> {
  const requested = req.queryAccountIds.length
    ? req.queryAccountIds
    : req.bodyAccountId
      ? [req.bodyAccountId]
      : req.header
        ? [req.header]
        : []
  const ids: string[] = []
  for (const raw of requested) {
    const id = normaliseAccountId(raw)
    if (!id) throw Errors.forbiddenAccount(`"${raw}" is not an account id this credential covers.`)
    if (!ids.includes(id)) ids.push(id)
  }
  if (principal.type === 'master') {
    if (req.dataRoute && !req.header)
      throw Errors.forbiddenAccount('The master key must name an account with X-Svc-Account on data routes.')
    // From the account cache: the master key names an account on every data route.
    for (const id of ids)
      if (!(await accountRow(database, id)))
        throw Errors.forbiddenAccount('An account named by the request does not exist.')
    return { id: ids[0] ?? null, ids, crossAccount: true }
  }
  const allowed = principal.accountIds ?? []
  for (const id of ids) if (!allowed.includes(id)) throw Errors.forbiddenAccount()
  // A partner key naming a suspended member's account (decisions "Abuse and cost (issue 30)").
  for (const id of ids) refuseSuspendedAccount(principal, id)
  const home = principal.homeAccountId
  const members = principal.memberAccountIds ?? []
  const crossAccount = ids.some((id) => members.includes(id))
  return { id: ids[0] ?? home, ids: ids.length ? ids : home ? [home] : [], crossAccount }
}
