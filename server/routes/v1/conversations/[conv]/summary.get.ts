import * as v from 'valibot'
import { JsonRecord } from '~/lib/schemas'
import { defineApiRoute } from '~/http/define-api-route'
import { AccountOnlyQuery, ConversationParams } from '~/domain/conversations/schemas'
import { getConversationSummary } from '~/domain/conversations/read'

export default defineApiRoute({
  summary: 'Read the summary of a conversation',
  description:
    "{conversation_id, summary_status, summary}; summary is null while summary_status is pending. Readable with summaries:read or conversations:read. PII in the summary is masked when the account's default_redaction is on.",
  tags: ['Conversations'],
  scope: 'summaries:read',
  anyScope: ['conversations:read'],
  dataRoute: true,
  params: ConversationParams,
  query: AccountOnlyQuery,
  repeatable: ['account_id'],
  response: v.object({
    conversation_id: v.string(),
    summary_status: v.string(),
    summary: v.nullable(JsonRecord(v.string(), v.unknown())),
  }),
  errors: ['invalid_id', 'conversation_deleted'],
  handler: ({ runtime, account, params }) => getConversationSummary(runtime.database, account.ids, params.conv),
})
