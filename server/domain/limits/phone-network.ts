// Calls cost money (decisions "Abuse and cost (issue 30)"): a trial is free (billing.ts charges it nothing),
// so with a real telephony provider a trial account may not place calls or transfers. The simulated network
// costs nothing real and stays free for every plan.
import type { Database } from '~/db/client'
import { isRealNetwork, type TelephonyProvider } from '~/kit/telephony'
import { apiError } from '~/lib/errors'
import { accountRow } from '~/domain/accounts/accounts'
import { planTerms } from './plans'

export const TRIAL_NO_CALLS =
  'A trial account cannot place calls or transfers on the phone network; change to a paid plan to call.'

/** Whether the account may dial out (a call, a campaign contact, a transfer leg) through `telephony`. */
export async function mayDial(
  database: Database,
  telephony: Pick<TelephonyProvider, 'name'>,
  accountId: string,
): Promise<boolean> {
  if (!isRealNetwork(telephony)) return true
  const account = await accountRow(database, accountId)
  return planTerms(account?.plan).phoneNetwork
}

/** 403 plan_limit_reached unless the account may dial out through `telephony`. */
export async function assertMayDial(
  database: Database,
  telephony: Pick<TelephonyProvider, 'name'>,
  accountId: string,
): Promise<void> {
  if (!(await mayDial(database, telephony, accountId))) throw apiError('plan_limit_reached', TRIAL_NO_CALLS)
}
