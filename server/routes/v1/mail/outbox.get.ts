import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { Cursor, Limit } from '~/lib/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { listOutbox, OutboxItem } from '~/domain/conversations/mail-outbox'

export default defineApiRoute({
  summary: 'List e-mails sent for the account',
  description:
    'The messages the mailer sent for this account (leads, tickets and orders e-mailed by capabilities), newest first. With the default outbox mailer nothing leaves the server: this list is where the mail is observed.',
  tags: ['Conversations'],
  scope: 'conversations:read',
  dataRoute: true,
  query: v.strictObject({
    limit: Limit(100, 50),
    cursor: Cursor,
    account_id: v.optional(v.union([v.string(), v.array(v.string())])),
  }),
  repeatable: ['account_id'],
  response: v.object({ data: v.array(OutboxItem) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  handler: async ({ runtime, principal, account, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { account_id: accountId },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listOutbox(runtime, accountId, page))
  },
})
