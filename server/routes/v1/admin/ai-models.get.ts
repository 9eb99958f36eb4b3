import { aiModels } from '~/domain/admin/system'
import { wholePage } from '~/domain/catalogue/page'
import { asList } from '~/http/define-api-route'
import { AiModels } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Chat engines and their models',
  description:
    'Every installed chat engine (providers/chat) with its models; active marks the one SVC_CHAT_ENGINE selected on this instance, whose default_model and large_model are what agents use (use_large_model picks the second).',
  response: AiModels,
  handler: ({ runtime }) => asList(wholePage(aiModels(runtime))),
})
