// Webhook history does not grow forever: on a server of its own, rows are aged straight in the database
// while it is stopped (the only way to pass days on PGlite), and the retention job (run at start) deletes
// dispatched events older than 7 days and final deliveries older than 30 days, and nothing else.
import { inArray, sql } from 'drizzle-orm'
import { afterAll, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { events, webhookDeliveries } from '~/db/schema'
import { until } from '../helpers/wait'

let server: TestServer | undefined
afterAll(async () => {
  await server?.stop()
})

const daysAgo = (d: number) => sql`now() - make_interval(days => ${d})`

it('deletes dispatched events after 7 days and final deliveries after 30, keeping pending work and recent history', async () => {
  verifies('webhooks.retention')
  server = await startServer()
  const t = await createTenant(createApi(server.base, server.masterKey))
  // Port 9 (discard) never answers; no delivery here is due, so none is sent.
  const whk = await t.api.post('/webhooks/endpoints', {
    url: 'http://127.0.0.1:9/hook',
    events: ['conversation.ended'],
  })
  expect(whk.status).toBe(201)
  const endpointId = whk.body.endpoint_id
  expect(endpointId).toMatch(/^whk_/)
  await server.stop('SIGTERM')

  const event = (id: string, dispatchedDaysAgo: number | null) => ({
    id,
    accountId: t.accountId,
    type: 'conversation.ended',
    createdAt: sql`now() - interval '40 days'` as unknown as Date,
    payload: { id, type: 'conversation.ended' },
    dispatchedAt: dispatchedDaysAgo === null ? null : (daysAgo(dispatchedDaysAgo) as unknown as Date),
  })
  const delivery = (id: string, status: string, updatedDaysAgo: number) => ({
    id,
    accountId: t.accountId,
    endpointId,
    eventId: `evt_${id}`,
    eventType: 'conversation.ended',
    body: '{}',
    status,
    nextAttemptAt: status === 'retrying' ? (sql`now() + interval '1 day'` as unknown as Date) : null,
    createdAt: daysAgo(updatedDaysAgo) as unknown as Date,
    updatedAt: daysAgo(updatedDaysAgo) as unknown as Date,
  })
  await withDatabase(server.dataDir, async (db) => {
    await db.db.insert(events).values([event('evt_ret_old', 8), event('evt_ret_recent', 1)])
    await db.db
      .insert(webhookDeliveries)
      .values([
        delivery('dlv_ret_old_ok', 'succeeded', 31),
        delivery('dlv_ret_old_dead', 'exhausted', 31),
        delivery('dlv_ret_recent_ok', 'succeeded', 2),
        delivery('dlv_ret_old_retrying', 'retrying', 31),
      ])
  })

  // The job runs at every start; poll through the API until the old final deliveries are gone.
  server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey })
  const api = createApi(server.base, t.key)
  const ids: string[] = await until(
    'the retention sweep',
    async () => {
      const list = await api.get('/webhooks/deliveries?limit=100')
      expect(list.status).toBe(200)
      const got: string[] = list.body.data.map((d: any) => d.delivery_id)
      return !got.includes('dlv_ret_old_ok') && got
    },
    10_000,
    250,
  )
  expect(ids.filter((id) => id.startsWith('dlv_ret_')).sort()).toEqual(['dlv_ret_old_retrying', 'dlv_ret_recent_ok'])
  await server.stop('SIGTERM')
  const left = await withDatabase(server.dataDir, (db) =>
    db.db
      .select({ id: events.id })
      .from(events)
      .where(inArray(events.id, ['evt_ret_old', 'evt_ret_recent'])),
  )
  expect(left.map((e) => e.id)).toEqual(['evt_ret_recent'])
}, 120_000)
