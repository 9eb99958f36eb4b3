import { actOnAgent } from '~/domain/admin/agents'
import { AdminAgentActionBody, AdminAgentActionResult, AdminAgentParams } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'
import { Errors } from '~/lib/errors'

export default defineAdminRoute({
  summary: 'Rebuild, pause or resume an agent',
  description:
    'pause: the agent refuses new conversations (API, widget, voice chat), new messages, outbound calls (409 agent_paused) and inbound calls (a spoken refusal and a failed conversation, failure_reason agent_paused); its running campaigns dial nothing until it is resumed. Pausing twice keeps the first paused_at. resume: clears the pause. rebuild: queues a build from from_step (default crawl) exactly as POST /agents/{agt}/build does (402 payment_required, 409 build_in_progress, the builds quota); answers 200 with the queued build. Recorded in the action log as agent.<action>.',
  params: AdminAgentParams,
  body: AdminAgentActionBody,
  response: AdminAgentActionResult,
  errors: ['invalid_id', 'agent_not_found', 'build_in_progress', 'payment_required', 'quota_exceeded'],
  action: (body) => `agent.${body.action}`,
  async handler({ runtime, params, body }) {
    if (body.action !== 'rebuild' && body.from_step !== undefined)
      throw Errors.validation('from_step', 'from_step goes with action rebuild only.')
    return actOnAgent(runtime, params.agt, body)
  },
})
