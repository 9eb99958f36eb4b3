import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AccountParams } from '~/domain/agents/schemas'
import { BuildAccepted, BuildCreate } from '~/domain/builds/schemas'
import { BUILD_JOB, startBuild } from '~/domain/builds/builds'

export default defineApiRoute({
  summary: 'Build an agent from a website',
  description:
    'The only way to create an agent. Answers 202 with the new agent id and its queued build; the steps crawl, summary, greeting and instructions run asynchronously (poll GET /agents/{agt}/build). The site is checked first: private, loopback, link-local and service hosts, non-http(s) schemes and redirects to such hosts are 400 invalid_url. Takes one agent_creates and one builds unit of the daily quotas and respects max_concurrent_builds; 402 payment_required when billing blocks.',
  tags: ['Agents'],
  scope: 'agents:write',
  rateClass: 'build',
  dataRoute: true,
  params: AccountParams,
  body: BuildCreate,
  status: 202,
  response: BuildAccepted,
  errors: ['invalid_url', 'invalid_id', 'agent_not_found', 'payment_required', 'quota_exceeded'],
  async handler({ runtime, principal, account, params, body }) {
    const accountId = agentAccount(principal, account, params.acc)
    const accepted = await startBuild(
      runtime.database,
      runtime.registries,
      runtime.config.allowPrivateHosts,
      accountId,
      body,
    )
    await runtime.queue.send(BUILD_JOB, { build_id: accepted.build.build_id })
    return accepted
  },
})
