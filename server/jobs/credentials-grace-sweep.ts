// Rotated keys keep working through their grace period; this sweep revokes them once it has ended.
// Revoking already-ended keys again is a no-op, so overlapping runs are harmless.
import { defineJob } from '~/kit/job'
import { revokeEndedGrace } from '~/domain/credentials/keys'

export default defineJob({
  name: 'credentials.grace-sweep',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, log }) {
    const n = await revokeEndedGrace(database)
    if (n) log(`revoked ${n} rotated key(s) at the end of their grace`)
  },
})
