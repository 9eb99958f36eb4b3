import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { VoiceItem, VoiceQuery } from '~/domain/catalogue/schemas'
import { listVoices } from '~/domain/catalogue/voices'
import { wholePage } from '~/domain/catalogue/page'

export default defineApiRoute({
  summary: 'List voices',
  description: 'Every voice of every voice provider, optionally filtered by provider and locale. One page, no cursor.',
  tags: ['Catalogues'],
  scope: 'agents:read',
  query: VoiceQuery,
  response: v.object({ data: v.array(VoiceItem) }),
  handler: async ({ runtime, query }) => asList(wholePage(await listVoices(runtime.registries.voice, query))),
})
