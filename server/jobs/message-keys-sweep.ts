// Message idempotency keys (POST …/messages idempotency_key) live 24 hours (decisions "Idempotency");
// this hourly sweep, also run at start to catch up, deletes older ones. Deleting by age is idempotent.
import { defineJob } from '~/kit/job'
import { sweepMessageKeys } from '~/domain/conversations/messages'

export default defineJob({
  name: 'conversations.message-keys-sweep',
  schedule: '23 * * * *',
  runAtStart: true,
  async run(_data, { database, log }) {
    const n = await sweepMessageKeys(database)
    if (n) log(`message keys: swept ${n} expired key(s)`)
  },
})
