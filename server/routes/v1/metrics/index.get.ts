import { defineApiRoute } from '~/http/define-api-route'
import { single } from '~/http/envelope'
import { METRICS_REPEATABLE, MetricsOverview, MetricsOverviewQuery } from '~/domain/metrics/schemas'
import { metricsAccounts, metricsOverview } from '~/domain/metrics/metrics'

export default defineApiRoute({
  summary: 'Account metrics overview',
  description:
    'One object for the window [from, to) (default the last 30 days, meta.applied_default_range true; at most 366 days), filtered by agent_id and channel (repeatable): the conversation figures of GET /metrics/conversations totals (soft-deleted conversations left out), active_agents (distinct agents with a conversation in the window), and the billed usage of sessions started in the window as GET /accounts/{acc}/usage counts it: billed_sessions, tokens, cost_usd, voice_seconds.',
  tags: ['Metrics'],
  scope: 'metrics:read',
  rateClass: 'metrics',
  dataRoute: true,
  query: MetricsOverviewQuery,
  repeatable: METRICS_REPEATABLE,
  response: MetricsOverview,
  errors: ['invalid_date', 'invalid_date_range', 'invalid_id', 'unsupported_filter', 'validation_error'],
  raw: true,
  async handler({ event, runtime, account, query }) {
    const { overview, meta } = await metricsOverview(runtime.database, metricsAccounts(account), query)
    return single(event, overview, meta)
  },
})
