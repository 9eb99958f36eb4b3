import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { CapabilityItem } from '~/domain/catalogue/schemas'
import { listCapabilities } from '~/domain/catalogue/capabilities'
import { wholePage } from '~/domain/catalogue/page'

export default defineApiRoute({
  summary: 'List capabilities',
  description:
    'The tools an agent may be given, their arguments (JSON Schema), the capability_settings values each needs and whether chat via API may use it.',
  tags: ['Catalogues'],
  scope: 'agents:read',
  query: v.strictObject({}),
  response: v.object({ data: v.array(CapabilityItem) }),
  handler: ({ runtime }) => asList(wholePage(listCapabilities(runtime.registries.capabilities, 'all'))),
})
