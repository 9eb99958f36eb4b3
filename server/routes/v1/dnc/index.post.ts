import { defineApiRoute, withStatus } from '~/http/define-api-route'
import { addDnc, dncAccount } from '~/domain/dnc/entries'
import { CreateDncBody, DncEntry } from '~/domain/dnc/schemas'

export default defineApiRoute({
  summary: 'Add a number to the do-not-call list',
  description:
    'Body {phone, reason?}. phone is an international number (a + then the country code), stored in E.164 form ' +
    '(400 invalid_phone otherwise). Answers 201 with the new entry (source api), or 200 with the entry already ' +
    'there for a number the account already lists (its reason and source unchanged). Listed numbers are never dialled.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  status: 201,
  otherStatuses: [200],
  body: CreateDncBody,
  response: DncEntry,
  errors: ['invalid_phone', 'unsupported_field', 'validation_error'],
  handler: async ({ runtime, account, body }) => {
    const { created, entry } = await addDnc(runtime, dncAccount(account), body)
    return created ? entry : withStatus(200, entry)
  },
})
