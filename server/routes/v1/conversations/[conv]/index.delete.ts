import { defineApiRoute } from '~/http/define-api-route'
import { AccountOnlyQuery, ConversationParams } from '~/domain/conversations/schemas'
import { deleteConversation } from '~/domain/conversations/delete'

export default defineApiRoute({
  summary: 'Delete a conversation (soft)',
  description:
    'Soft delete: nothing is erased. The conversation leaves lists, reads answer 410 conversation_deleted, a tombstone appears in GET /conversations/deleted ' +
    'and conversation.deleted fires. Deleting again answers 410 conversation_deleted.',
  tags: ['Conversations'],
  scope: 'conversations:write',
  dataRoute: true,
  params: ConversationParams,
  query: AccountOnlyQuery,
  repeatable: ['account_id'],
  status: 204,
  errors: ['invalid_id', 'conversation_deleted'],
  async handler({ runtime, account, params }) {
    await deleteConversation(runtime.database, account.ids, params.conv)
  },
})
