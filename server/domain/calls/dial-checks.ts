// Checks at dial time (decisions, Security rules "Checks at dial time"): what POST /calls checked when the
// call was asked for is checked again when a queued call or a campaign contact is actually dialled, since
// the account may have been suspended, moved to the trial plan, run out of money or paused the agent
// meanwhile, and the number may have joined the do-not-call list. Each refusal is a public sentence: it
// becomes the call's failure_reason.
import { and, eq, inArray, isNotNull } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { accounts, agents, dncEntries } from '~/db/schema'
import { isRealNetwork, type TelephonyProvider } from '~/kit/telephony'
import { balanceFacts, blockReason } from '~/domain/conversations/billing'
import { planTerms } from '~/domain/limits/plans'

export const REFUSED_AT_DIAL = {
  dnc: 'The number was added to the do-not-call list after the call was queued, so it was not dialled.',
  suspended: 'The account was suspended after the call was queued, so it was not dialled.',
  paused: 'The agent was paused after the call was queued, so it was not dialled.',
  trial:
    'The account is on the trial plan, which cannot place calls on the phone network, so the call was not dialled.',
} as const

/**
 * Why the account may not dial now through `telephony` (suspended; a trial plan on the real phone network,
 * as POST /calls refuses it; or billing blocks: the 402 check), or null. Read from the database each time,
 * never from the balance or account-row caches, so a suspension, a move to the trial or an exhausted wallet
 * bites at once. Called inside the transaction that stamps the calls it lets through (started_at): the
 * account row is held FOR SHARE until that commits, so a suspension (which updates the row) waits for a dial
 * round that already passed this check, and every call dialled on its word was stamped before the suspension
 * committed, hence before its answer; a round after it reads the suspension. Without the lock a round that
 * read the account just before the suspension could stamp and dial its calls after the answer (the chaos
 * run's check).
 */
export async function accountDialBlock(
  ex: Executor,
  accountId: string,
  telephony: Pick<TelephonyProvider, 'name'>,
): Promise<string | null> {
  await ex.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('share')
  const facts = await balanceFacts(ex, accountId)
  if (!facts) return 'The account has no subscription, so the call was not dialled.'
  if (facts.status === 'suspended') return REFUSED_AT_DIAL.suspended
  if (isRealNetwork(telephony) && !planTerms(facts.plan).phoneNetwork) return REFUSED_AT_DIAL.trial
  const block = blockReason(facts)
  return block ? `Payment is required (${block.replace(/\.$/, '')}), so the call was not dialled.` : null
}

/** The agents among `ids` that are paused now. */
export async function pausedAgents(ex: Executor, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set()
  const rows = await ex
    .select({ id: agents.id })
    .from(agents)
    .where(and(inArray(agents.id, [...new Set(ids)]), isNotNull(agents.pausedAt)))
  return new Set(rows.map((r) => r.id))
}

/** The numbers among `phones` on the account's do-not-call list now. */
export async function dncListed(ex: Executor, accountId: string, phones: string[]): Promise<Set<string>> {
  if (!phones.length) return new Set()
  const rows = await ex
    .select({ phone: dncEntries.phoneE164 })
    .from(dncEntries)
    .where(and(eq(dncEntries.accountId, accountId), inArray(dncEntries.phoneE164, [...new Set(phones)])))
  return new Set(rows.map((r) => r.phone))
}
