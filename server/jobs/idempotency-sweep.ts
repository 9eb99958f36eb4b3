// Idempotency keys live 24 hours (decisions); this hourly sweep forgets older ones. Deleting by age is
// idempotent, so a repeated or overlapping run is harmless.
import { lt } from 'drizzle-orm'
import { defineJob } from '~/kit/job'
import { idempotencyKeys } from '~/db/schema'

export default defineJob({
  name: 'idempotency.sweep',
  schedule: '17 * * * *',
  async run(_data, { database }) {
    await database.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, new Date(Date.now() - 24 * 3600_000)))
  },
})
