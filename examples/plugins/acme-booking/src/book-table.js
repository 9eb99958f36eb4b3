// book_table: books a table for a party on a date and time. Arguments are checked by the valibot schema
// before run() is called (the host parses them); run() answers the confirmation the agent reads back and
// records the booking on the conversation.
import { defineCapability } from '@svc/plugin-kit'
import * as v from 'valibot'

const MAX_PARTY = 20

// An intent's captures arrive as text ("4"), a chat engine's arguments as numbers: both are a party size.
const partySize = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,3}$/))]),
  v.transform(Number),
  v.integer(),
  v.minValue(1, 'a party of at least 1'),
  v.maxValue(MAX_PARTY, `at most ${MAX_PARTY} guests; larger groups call the restaurant`),
)

export default defineCapability({
  name: 'book_table',
  description:
    'Book a table at the restaurant for a party of 1 to 20 on a given date (YYYY-MM-DD) and time (HH:MM, 24 h). Ask for any of them the visitor has not given.',
  parameters: v.strictObject({
    party_size: partySize,
    date: v.optional(v.pipe(v.string(), v.isoDate('a date as YYYY-MM-DD'))),
    time: v.optional(v.pipe(v.string(), v.isoTime('a time as HH:MM'))),
    name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(200))),
  }),
  needs: [],
  apiChat: true,
  outbound: true,
  // For the offline `local` engine (capability intents): a sentence that matches calls the capability with
  // the named groups as arguments.
  intents: [
    {
      examples: ['I would like to book a table for 4 on 2027-03-14 at 19:30'],
      pattern:
        'book (?:a )?table for (?<party_size>\\d+)(?: on (?<date>\\d{4}-\\d{2}-\\d{2}))?(?: at (?<time>\\d{1,2}:\\d{2}))?',
    },
  ],
  example: { args: { party_size: 4, date: '2027-03-14', time: '19:30', name: 'Ada' }, settings: {} },
  /**
   * @param {import('@svc/plugin-kit').CapabilityContext} ctx
   * @param {{ party_size: number, date?: string, time?: string, name?: string }} args
   */
  async run(ctx, args) {
    if (!args.date || !args.time)
      return {
        ok: false,
        message: `For ${args.party_size}, gladly: on which ${args.date ? 'time' : 'date'} would you like the table?`,
      }
    const reference = `ACME-${args.date.replaceAll('-', '')}-${args.time.replace(':', '')}-${args.party_size}`
    return {
      ok: true,
      message: `Your table for ${args.party_size} on ${args.date} at ${args.time} is booked (reference ${reference}).`,
      record: { type: 'table_booking', reference, ...args, conversation_id: ctx.conversationId },
      outcome: 'resolved',
    }
  },
})
