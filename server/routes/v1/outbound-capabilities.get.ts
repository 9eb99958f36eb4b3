import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { CapabilityItem } from '~/domain/catalogue/schemas'
import { listCapabilities } from '~/domain/catalogue/capabilities'
import { wholePage } from '~/domain/catalogue/page'

export default defineApiRoute({
  summary: 'List outbound capabilities',
  description: 'The capabilities an outbound call may use (the same shape as GET /capabilities).',
  tags: ['Catalogues'],
  scope: 'agents:read',
  query: v.strictObject({}),
  response: v.object({ data: v.array(CapabilityItem) }),
  handler: ({ runtime }) => asList(wholePage(listCapabilities(runtime.registries.capabilities, 'outbound'))),
})
