// Daily (and at start, to catch up): deletes dispatched events after 7 days and final deliveries after
// 30 days (server/domain/webhooks/retention.ts). Deleting by age is idempotent.
import { defineJob } from '~/kit/job'
import { sweepWebhookHistory } from '~/domain/webhooks/retention'

export default defineJob({
  name: 'webhooks.retention',
  schedule: '41 4 * * *',
  runAtStart: true,
  async run(_data, { database, log }) {
    const n = await sweepWebhookHistory(database)
    if (n.events || n.deliveries)
      log(`webhook history: deleted ${n.events} event(s) and ${n.deliveries} deliver(y/ies)`)
  },
})
