import { defineApiRoute } from '~/http/define-api-route'
import { single } from '~/http/envelope'
import { ConversationMetricsQuery, ConversationMetricsReport, METRICS_REPEATABLE } from '~/domain/metrics/schemas'
import { conversationMetrics, metricsAccounts } from '~/domain/metrics/metrics'

export default defineApiRoute({
  summary: 'Conversation metrics by agent, agent version or day',
  description:
    'Conversations started in [from, to) (default the last 30 days, meta.applied_default_range true; at most 366 days), soft-deleted ones left out, filtered by agent_id and channel (both repeatable), grouped by group_by: agent (agent_id), agent_version (agent_id, agent_version) or day (UTC YYYY-MM-DD, the default). Each row and totals: conversations, completed, outcomes (a count per Outcome, every key present), without_outcome, escalated, answers (agent answer turns), unanswered, unanswered_rate (unanswered / answers, null without answers), latency_ms {p50, p90, p99} (percentile_cont over answer latencies, null without any) and tokens (billed, from the usage rows of those conversations). markers lists the deploy markers of the window (as GET /agent-versions, oldest first) when grouping by agent or agent_version, else [].',
  tags: ['Metrics'],
  scope: 'metrics:read',
  rateClass: 'metrics',
  dataRoute: true,
  query: ConversationMetricsQuery,
  repeatable: METRICS_REPEATABLE,
  response: ConversationMetricsReport,
  errors: ['invalid_date', 'invalid_date_range', 'invalid_id', 'unsupported_filter', 'validation_error'],
  raw: true,
  async handler({ event, runtime, account, query }) {
    const { report, meta } = await conversationMetrics(runtime.database, metricsAccounts(account), query)
    return single(event, report, meta)
  },
})
