import * as v from 'valibot'
import { defineApiRoute } from '~/http/define-api-route'
import { AccountOnlyQuery, ConversationParams } from '~/domain/conversations/schemas'
import { getRecording } from '~/domain/conversations/read'
import { publicOrigin } from '~/http/public-origin'

export default defineApiRoute({
  summary: 'Read the recording of a conversation',
  description:
    '404 not_found when the conversation has no recording; otherwise {conversation_id, url, expires_at, duration_s}: url is signed and valid for 15 minutes.',
  tags: ['Conversations'],
  scope: 'conversations:read',
  dataRoute: true,
  rateClass: 'audio',
  params: ConversationParams,
  query: AccountOnlyQuery,
  repeatable: ['account_id'],
  response: v.object({
    conversation_id: v.string(),
    url: v.string(),
    expires_at: v.pipe(v.string(), v.isoTimestamp()),
    duration_s: v.nullable(v.number()),
  }),
  errors: ['invalid_id', 'conversation_deleted'],
  handler: ({ event, runtime, account, params }) =>
    getRecording(runtime.database.db, account.ids, params.conv, {
      secret: runtime.config.secret,
      publicUrl: publicOrigin(event, runtime.config),
    }),
})
