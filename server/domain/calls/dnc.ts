// The do-not-call list's first writer: a caller who asks not to be called again (source opt_out). The
// outbound issue adds the routes and the dial-time check over the same table.
import type { Database } from '~/db/client'
import { dncEntries } from '~/db/schema'

// Plain alternations over a text already cut to 2,000 characters: no nested or overlapping quantifiers.
const OPT_OUT = [
  /\b(?:don'?t|do not|never|stop) (?:ever )?(?:call|calling|ring|ringing|phone|phoning) (?:me|this number|us)\b/i,
  /\b(?:remove|take) (?:me|my number|this number) (?:from|off) (?:your|the) (?:list|calling list|call list)\b/i,
  /\b(?:put|add) (?:me|my number|this number) (?:on|to) (?:your|the) do not call list\b/i,
]

/** Whether the caller asks not to be called again. */
export const isOptOut = (text: string) => OPT_OUT.some((re) => re.test(text.slice(0, 2_000)))

/** Lists the number for the account (one entry per number: an existing one is kept as it is). */
export async function addOptOut(database: Database, accountId: string, phoneE164: string, conversationId: string) {
  await database.db
    .insert(dncEntries)
    .values({ accountId, phoneE164, source: 'opt_out', reason: `Asked not to be called again (${conversationId})` })
    .onConflictDoNothing()
}
