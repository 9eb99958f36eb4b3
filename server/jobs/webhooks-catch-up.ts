// Every minute and at every start: a pass of this process's webhook pump (dispatch undispatched
// events, send due deliveries). The pump already polls; this job is the durable, queue-driven reminder
// that also covers an event left undispatched by a crash before any pump ran.
import { defineJob } from '~/kit/job'
import { currentPump, dispatchBatch } from '~/domain/webhooks/pump'

export default defineJob({
  name: 'webhooks.catch-up',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database }) {
    const pump = currentPump()
    if (pump) return pump.kick()
    // No pump in this process (not booted through the server plugin): at least fan the events out.
    while ((await dispatchBatch(database)) > 0) {
      /* drain */
    }
  },
})
