import { defineApiRoute } from '~/http/define-api-route'
import { ConversationParams, DetailQuery } from '~/domain/conversations/schemas'
import { ConversationDetail } from '~/domain/conversations/chat-schemas'
import { getConversation } from '~/domain/conversations/read'

export default defineApiRoute({
  summary: 'Read a conversation',
  description:
    'The list object plus transcript, external_session_id, redacted and redaction_rules_applied. include is a CSV of transcript, summary, identity, metrics ' +
    '(default all four) and analysis (the newest analysis {analysis_version, values, evidence, success, analyzed_at} or null; values redacted like the transcript); transcript_format=text adds transcript_text; redact (default: the account default_redaction) masks e-mails, phone numbers, ' +
    "Luhn-valid card numbers and IBANs keeping the last 2 characters. Another account's conversation is 404, a deleted one 410 conversation_deleted; " +
    'a key with only summaries:read gets 403 and reads /conversations/{conv}/summary.',
  tags: ['Conversations'],
  scope: 'conversations:read',
  anyScope: ['summaries:read'],
  dataRoute: true,
  params: ConversationParams,
  query: DetailQuery,
  repeatable: ['account_id'],
  response: ConversationDetail,
  errors: ['invalid_id', 'unsupported_filter', 'conversation_deleted'],
  handler: ({ runtime, principal, account, params, query }) =>
    getConversation(runtime.database, principal, account.ids, params.conv, query),
})
