// The leg a transfer_call dials (decisions "Abuse and cost (issue 30)"): it costs money like a call, so it is
// time-limited like one (the agent's max_call_duration_s, handed to the provider) and billed per minute like
// one. The provider reports the leg's end to the URL below (a `transfer_ended` event: Twilio's <Dial action>),
// and its talk time is added to the conversation's usage row: telephony seconds and their cost. The end is
// recorded as `metrics.transfer_leg_s`, so a repeated report bills nothing more.
import { and, eq, sql } from 'drizzle-orm'
import type { Config } from '~/config'
import type { Database } from '~/db/client'
import { conversations } from '~/db/schema'
import { addVoiceUsage, usageSessionOf } from '~/domain/conversations/billing'
import { VOICE_PRICE_PER_MINUTE } from './finish'

const CONVERSATION_ID = /^conv_[pud]\d{1,18}$/

/** Where the provider reports the end of a transfer leg of this conversation (its status webhook). */
export const transferStatusUrl = (config: Pick<Config, 'publicUrl'>, provider: string, conversationId: string) =>
  `${config.publicUrl}/telephony/${provider}/status?transfer_of=${encodeURIComponent(conversationId)}`

/** The conversation id in the `transfer_of` query of that URL, or null. */
export const transferOf = (value: unknown): string | null =>
  typeof value === 'string' && CONVERSATION_ID.test(value) ? value : null

/**
 * Bills the transfer leg of a voice conversation: `durationS` seconds at the voice price, added to its usage
 * row (whether or not the conversation has closed yet). Answers false when the leg was already billed or the
 * conversation is unknown or not a phone call.
 */
export async function billTransferLeg(database: Database, conversationId: string, durationS: number): Promise<boolean> {
  const seconds = Math.max(0, Math.floor(durationS))
  return database.tx(async (tx) => {
    const [row] = await tx
      .update(conversations)
      .set({
        metrics: sql`${conversations.metrics} || jsonb_build_object('transfer_leg_s', ${seconds}::int)`,
        updatedAt: new Date(),
      })
      .where(
        and(
          eq(conversations.id, conversationId),
          sql`${conversations.channel} IN ('phone_inbound', 'phone_outbound')`,
          sql`${conversations.metrics}->'transfer_leg_s' IS NULL`,
        ),
      )
      .returning()
    if (!row) return false
    await addVoiceUsage(tx, {
      ...usageSessionOf(row),
      seconds,
      costUsd: (seconds / 60) * VOICE_PRICE_PER_MINUTE,
    })
    return true
  })
}
