import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { createCampaign } from '~/domain/campaigns/campaigns'
import { Campaign, CreateCampaignBody } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'Create a campaign',
  description:
    'Body {agent_id, profile_id, list_id, name, schedule {timezone, days[], start, end}, max_concurrent? (1..50, default 1), ' +
    'max_attempts? (1..10, default 1), retry_delay_minutes? (0..10080, fractions allowed, default 60), voicemail_policy? ' +
    '(hang_up, the only policy: an answering machine ends the call; else 400 unsupported_policy)}. ' +
    "Another account's or an unknown agent is 404 agent_not_found, its profile or list 404 not_found; a profile or list of " +
    'another agent of the account is 400 validation_error (field profile_id or list_id). schedule.timezone is an IANA zone ' +
    '(stored canonical), days are distinct mon..sun, start and end are HH:MM (24-hour; end exclusive, 24:00 allowed) with ' +
    'start before end (else 400 validation_error, field schedule.end). Answers 201 with status draft; POST /campaigns/{cmp}/start runs it.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  status: 201,
  body: CreateCampaignBody,
  response: Campaign,
  errors: ['invalid_id', 'agent_not_found', 'not_found', 'unsupported_field', 'validation_error', 'unsupported_policy'],
  handler: ({ runtime, principal, account, body }) => createCampaign(runtime, agentAccount(principal, account), body),
})
