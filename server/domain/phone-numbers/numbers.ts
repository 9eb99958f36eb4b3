// Phone numbers of an account (num_<n>): create, list, read, patch (assign or unassign an agent, label)
// and delete. Every query but findNumberByE164 is scoped by account; another account's number is 404
// not_found. A number is held by at most one account: the unique index on e164 decides, so two
// concurrent creates of one number answer one 201 and one 409 number_taken.
import { and, desc, eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { phoneNumbers } from '~/db/schema'
import { loadAgent } from '~/domain/agents/rows'
import type { Runtime } from '~/kit/runtime'
import { isUniqueViolation } from '~/lib/db-errors'
import { Errors, apiError } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { providerDetail } from '~/lib/provider-detail'
import type { CreateNumberBody, PatchNumberBody } from './schemas'

export type PhoneNumberRow = typeof phoneNumbers.$inferSelect

/** What the inbound-call path needs to route a dialled number. */
export interface NumberRoute {
  id: string
  accountId: string
  agentId: string | null
  e164: string
  provider: string
}

const numberNotFound = () => Errors.notFound('Phone number')
const numberNotOwned = (e164: string, provider: string) =>
  apiError(
    'number_not_owned',
    `${e164} is not a number of the ${provider} account this service uses; buy or port it there first.`,
    'e164',
  )
const numberTaken = (e164: string) =>
  apiError('number_taken', `${e164} is already held by an account; release it there first.`, 'e164')

export function presentNumber(r: PhoneNumberRow) {
  return {
    number_id: r.id,
    account_id: r.accountId,
    e164: r.e164,
    provider: r.provider,
    agent_id: r.agentId,
    label: r.label,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** The one account a phone-number request acts for (data routes always resolve one). */
export function numberAccount(account: { id: string | null }): string {
  if (!account.id) throw Errors.notFound('Account')
  return account.id
}

export async function loadNumber(ex: Executor, accountId: string, id: string, lock = false): Promise<PhoneNumberRow> {
  const q = ex
    .select()
    .from(phoneNumbers)
    .where(and(eq(phoneNumbers.id, id), eq(phoneNumbers.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw numberNotFound()
  return row
}

/**
 * Global lookup by the dialled number (not scoped by account: an inbound webhook knows only the number).
 * `e164` must already be canonical (+14155550123); answers null for a number no account holds.
 */
export async function findNumberByE164(db: Executor, e164: string): Promise<NumberRoute | null> {
  const [row] = await db
    .select({
      id: phoneNumbers.id,
      accountId: phoneNumbers.accountId,
      agentId: phoneNumbers.agentId,
      e164: phoneNumbers.e164,
      provider: phoneNumbers.provider,
    })
    .from(phoneNumbers)
    .where(eq(phoneNumbers.e164, e164))
    .limit(1)
  return row ?? null
}

/**
 * Whether the provider account owns `e164`. A lookup that fails (the provider unreachable, a 5xx, refused
 * credentials) is the provider's trouble, not the client's and not ours: 502 provider_unavailable, whose
 * message names no provider URL or account (the log has the provider's answer), and the client may retry.
 */
async function ownedByProvider(telephony: Runtime['providers']['telephony'], e164: string): Promise<boolean> {
  if (!telephony.ownsNumber) return false
  try {
    return await telephony.ownsNumber(e164)
  } catch (err) {
    console.error(`[phone-numbers] ${telephony.name} ownership lookup of ${e164} failed: ${providerDetail(err)}`)
    throw apiError(
      'provider_unavailable',
      `The ${telephony.name} telephony provider could not be asked whether it owns ${e164}; nothing was routed. Retry in a moment.`,
    )
  }
}

/**
 * 201 with the number, held by the configured telephony provider. An agent_id names an agent of the same
 * account (another account's or an unknown agent is 404 agent_not_found, as on POST /conversations).
 * The provider must own the number (decisions "Numbers": looked up through it; the simulated network owns
 * every number; a provider that cannot tell routes none): else 400 number_not_owned. A failed lookup routes
 * nothing (502 provider_unavailable). The unique index on e164 answers a number held by any account, also under a race: 409
 * number_taken.
 */
export async function createNumber(runtime: Runtime, accountId: string, body: CreateNumberBody) {
  const db = runtime.database.db
  const telephony = runtime.providers.telephony
  if (body.agent_id) await loadAgent(db, accountId, body.agent_id)
  if (!(await ownedByProvider(telephony, body.e164))) throw numberNotOwned(body.e164, telephony.name)
  try {
    const [row] = await db
      .insert(phoneNumbers)
      .values({
        accountId,
        e164: body.e164,
        provider: telephony.name,
        agentId: body.agent_id ?? null,
        label: body.label ?? null,
      })
      .returning()
    return presentNumber(row)
  } catch (err) {
    if (isUniqueViolation(err)) throw numberTaken(body.e164)
    throw err
  }
}

/** Newest first; `req` is bound to filters { account_id, agent_id } and sort -created_at,-id. */
export async function listNumbers(
  runtime: Runtime,
  accountId: string,
  filters: { agentId?: string },
  req: KeysetRequest,
) {
  const rows = await runtime.database.db
    .select()
    .from(phoneNumbers)
    .where(
      and(
        eq(phoneNumbers.accountId, accountId),
        filters.agentId === undefined ? undefined : eq(phoneNumbers.agentId, filters.agentId),
        afterPosition(req, phoneNumbers.createdAt, phoneNumbers.id),
      ),
    )
    .orderBy(desc(phoneNumbers.createdAt), desc(phoneNumbers.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentNumber)
}

export async function getNumber(runtime: Runtime, accountId: string, id: string) {
  return presentNumber(await loadNumber(runtime.database.db, accountId, id))
}

/** agent_id assigns an agent of the account (null unassigns); label sets it (null clears). */
export async function patchNumber(runtime: Runtime, accountId: string, id: string, patch: PatchNumberBody) {
  return runtime.database.tx(async (tx) => {
    await loadNumber(tx, accountId, id, true)
    if (patch.agent_id) await loadAgent(tx, accountId, patch.agent_id)
    const [row] = await tx
      .update(phoneNumbers)
      .set({
        ...(patch.agent_id !== undefined ? { agentId: patch.agent_id } : {}),
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        updatedAt: new Date(),
      })
      .where(eq(phoneNumbers.id, id))
      .returning()
    return presentNumber(row)
  })
}

/** Hard delete: the number is released at once and may be added again (by any account). */
export async function deleteNumber(runtime: Runtime, accountId: string, id: string) {
  const gone = await runtime.database.db
    .delete(phoneNumbers)
    .where(and(eq(phoneNumbers.id, id), eq(phoneNumbers.accountId, accountId)))
    .returning({ id: phoneNumbers.id })
  if (!gone.length) throw numberNotFound()
}
