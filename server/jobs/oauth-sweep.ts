// Hourly clean-up of abandoned OAuth registrations and approvals and of expired codes and tokens.
// Every step is conditional on the rows' state, so overlapping or repeated runs are harmless.
import { defineJob } from '~/kit/job'
import { sweepOAuth } from '~/domain/oauth/sweep'

export default defineJob({
  name: 'oauth.sweep',
  schedule: '17 * * * *',
  runAtStart: true,
  async run(_data, { database, log }) {
    const n = await sweepOAuth(database)
    if (n.grants || n.clients)
      log(`ended ${n.grants} unredeemed approval(s), retired ${n.clients} unused client registration(s)`)
  },
})
