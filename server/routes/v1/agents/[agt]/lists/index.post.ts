import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { createList } from '~/domain/contact-lists/lists'
import { ContactList, CreateListBody } from '~/domain/contact-lists/schemas'

export default defineApiRoute({
  summary: 'Create a contact list',
  description:
    'Body {name, default_region?}. default_region (ISO 3166 alpha-2, e.g. GB; null or absent: none) is the region ' +
    'national-format numbers in imports are read in; without it an import takes only international numbers. ' +
    "Another account's or an unknown agent is 404 agent_not_found. Answers 201 with item_count 0.",
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  status: 201,
  params: AgentParams,
  body: CreateListBody,
  response: ContactList,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error'],
  handler: ({ runtime, principal, account, params, body }) =>
    createList(runtime, agentAccount(principal, account), params.agt, body),
})
