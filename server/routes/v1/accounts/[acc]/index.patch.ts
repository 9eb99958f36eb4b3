import { defineApiRoute } from '~/http/define-api-route'
import { Account, AccountParams, AccountPatch } from '~/domain/accounts/schemas'
import { patchAccount } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Update an account',
  description:
    'external_ids merge key by key (null clears a key); default_redaction; transcript_retention_days (null for none).',
  tags: ['Accounts'],
  scope: 'accounts:write',
  params: AccountParams,
  body: AccountPatch,
  patch: true,
  response: Account,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params, body }) => patchAccount(runtime.database, principal, params.acc, body),
})
