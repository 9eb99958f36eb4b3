// Never lost: the server is SIGKILLed while a conversation.ended delivery is in flight (the receiver
// holds the request open), then started again on the same data. The delivery's lease lapses and the
// restarted process sends it again: same delivery id, same event id, same body, signed.
import { afterAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { verifyWebhook } from '~/domain/webhooks/verify'
import { until } from '../helpers/wait'

const servers: TestServer[] = []
let rx: Receiver | undefined
let site: TestSite | undefined
afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL')
  await rx?.close()
  await site?.close()
})

describe('webhooks across a crash', () => {
  it('delivers an event whose delivery was in flight when the process was SIGKILLed', async () => {
    verifies('webhooks.at-least-once')
    rx = await startReceiver()
    site = await serveSite({
      '/': {
        body: html('Numbat Nursery', '<h1>Numbat Nursery</h1><p>Numbat Nursery sells native plants in Albany.</p>'),
      },
    })
    // The first request is held open (the process dies while sending it); later ones succeed.
    rx.on('/hold', (_r, nth) => (nth === 1 ? 'hang' : 200))
    const first = await startServer()
    servers.push(first)
    const t = await createTenant(createApi(first.base, first.masterKey))
    const agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const ep = await t.api.post('/webhooks/endpoints', { url: rx.url('/hold'), events: ['conversation.ended'] })
    expect(ep.status).toBe(201)
    const conv = await t.api.post('/conversations', { agent_id: agentId })
    expect(conv.status).toBe(201)
    expect((await t.api.post(`/conversations/${conv.body.conversation_id}/end`)).status).toBe(200)

    const [held] = await rx.waitFor((r) => r.some((x) => x.path === '/hold'), 'the first attempt', 30_000)
    expect(held.json).toMatchObject({
      type: 'conversation.ended',
      data: { conversation_id: conv.body.conversation_id },
    })
    await first.stop('SIGKILL')

    const second = await startServer({ dataDir: first.dataDir, masterKey: first.masterKey })
    servers.push(second)
    await rx.waitFor((r) => r.filter((x) => x.path === '/hold').length >= 2, 'the delivery after the restart', 90_000)
    const again = rx.at('/hold')[1]
    expect(again.json.id).toBe(held.json.id)
    expect(again.body).toBe(held.body)
    expect(again.headers['x-svc-delivery']).toBe(held.headers['x-svc-delivery'])
    expect(verifyWebhook({ secret: ep.body.secret, body: again.body, headers: again.headers })).toBe(true)

    const api2 = createApi(second.base, t.key)
    const d = await until(
      'the delivery to succeed after the restart',
      async () => {
        const got = (await api2.get(`/webhooks/deliveries?endpoint_id=${ep.body.endpoint_id}`)).body.data[0]
        return got?.status === 'succeeded' && got
      },
      10_000,
    )
    // The attempt cut short by the crash left no record; the one after the restart did.
    expect(d).toMatchObject({
      delivery_id: held.headers['x-svc-delivery'],
      event_id: held.json.id,
      status: 'succeeded',
      last_status_code: 200,
    })
    expect(rx.at('/hold')).toHaveLength(2)
  }, 180_000)
})
