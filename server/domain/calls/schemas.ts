import * as v from 'valibot'

const Phone = v.pipe(v.string(), v.minLength(1), v.maxLength(32))

export const SimulatedInboundCallBody = v.strictObject({
  to: v.pipe(Phone, v.description('A phone number of this account (E.164), the one the caller dials.')),
  from: v.pipe(Phone, v.description("The caller's number (E.164).")),
  utterances: v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(1_000))),
    v.minLength(1),
    v.maxLength(20),
    v.description('What the caller says, in order; the caller hangs up after the answer to the last one.'),
  ),
  hang_up: v.optional(
    v.pipe(
      v.boolean(),
      v.description(
        'Default true. false: after the last answer the caller stays on the line in silence until the agent ends the call (to try silence_timeout_s and max_call_duration_s).',
      ),
    ),
  ),
})

export const SimulatedInboundCall = v.object({
  conversation_id: v.string(),
  status: v.picklist(['in_progress', 'failed']),
})
