// How a usage_records row counts voice seconds, shared by GET /accounts/{acc}/usage and the metrics:
// only voice channels count; the telephony duration wins; a duration derived from two timestamps is
// ignored above 4 hours (contract, Accounts usage).
import { sql } from 'drizzle-orm'

export const VOICE_CHANNELS = ['phone_inbound', 'phone_outbound', 'voice_chat'] as const
const DERIVED_DURATION_CAP_S = 4 * 3600

/** SQL expression over a usage_records row (unqualified columns): its billed voice seconds. */
export const voiceSecondsSql = () => sql`CASE WHEN channel IN (${sql.join(
  VOICE_CHANNELS.map((c) => sql`${c}`),
  sql`, `,
)}) THEN coalesce(telephony_seconds,
      CASE WHEN ended_at IS NOT NULL AND extract(epoch FROM ended_at - started_at) <= ${DERIVED_DURATION_CAP_S} THEN extract(epoch FROM ended_at - started_at)::int ELSE 0 END) ELSE 0 END`
