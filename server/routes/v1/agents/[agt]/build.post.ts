import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { Build, BuildRerun } from '~/domain/builds/schemas'
import { BUILD_JOB, rerunBuild } from '~/domain/builds/builds'

export default defineApiRoute({
  summary: 'Re-run the build from a step',
  description:
    'from_step (default crawl): earlier steps are skipped and their outputs kept. 409 build_in_progress while a build is queued or running. Every successful build deploys prompt versions. 402 payment_required when billing blocks; takes one builds unit.',
  tags: ['Agents'],
  scope: 'agents:write',
  rateClass: 'build',
  dataRoute: true,
  params: AgentParams,
  body: BuildRerun,
  status: 202,
  response: Build,
  errors: ['invalid_id', 'agent_not_found', 'build_in_progress', 'payment_required', 'quota_exceeded'],
  async handler({ runtime, principal, account, params, body }) {
    const build = await rerunBuild(runtime.database, agentAccount(principal, account), params.agt, body.from_step)
    await runtime.queue.send(BUILD_JOB, { build_id: build.build_id })
    return build
  },
})
