// A live call's session lives in the memory of one instance. Outbound calls named their owner and were
// closed by the others when it died; an inbound call (and a voice chat) had no owner, so when its instance
// was killed the conversation stayed in_progress, holding one of the account's lines for 4 hours. Now a
// voice conversation names the instance that holds its session, and the survivors close it as interrupted.
// PostgreSQL only: two instances share one database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const ENV = {
  SVC_RATE_LIMITS: 'read=100000,write=100000,calls=100000',
  SVC_CALL_STALE_SECONDS: '6',
  SVC_QUEUE_SCHEMA: `pgboss_voice_owner_${process.pid}`,
}
const TO = `+1415556${String(1000 + (process.pid % 8000)).padStart(4, '0')}`

describe.skipIf(!process.env.DATABASE_URL)('voice conversations of a killed instance (PostgreSQL)', () => {
  let a: TestServer
  let b: TestServer
  let site: TestSite
  let t: Tenant
  let agent: string
  beforeAll(async () => {
    a = await startServer({ env: ENV })
    b = await startServer({ env: ENV, masterKey: a.masterKey })
    site = await serveSite({ '/': { body: html('Bilby Buses', '<h1>Bilby Buses</h1><p>Buses in Alice Springs.</p>') } })
    t = await createTenant(createApi(a.base, a.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    // The caller stays on the line in silence: only the instance's death can end the call in this test.
    expect((await t.api.patch(`/agents/${agent}`, { silence_timeout_s: 300, max_call_duration_s: 600 })).status).toBe(
      200,
    )
    expect((await t.api.post('/phone-numbers', { e164: TO, agent_id: agent })).status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await a?.stop().catch(() => {})
    await b?.stop()
    await site?.close()
  })

  it('an inbound call whose instance is SIGKILLed is closed by the other as interrupted', async () => {
    verifies('calls.owner-died')
    const placed = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550199',
      utterances: ['Hello, when does the first bus leave?'],
      hang_up: false,
    })
    expect(placed.status, placed.text).toBe(202)
    const id = placed.body.conversation_id as string
    const onB = createApi(b.base, t.key)
    await until(
      'the agent to answer',
      async () => {
        const r = await onB.get(`/conversations/${id}?include=transcript`)
        return r.body.status === 'in_progress' && (r.body.transcript as unknown[]).length >= 2
      },
      30_000,
    )
    await a.stop('SIGKILL')
    const closed = await until(
      `${id} to be closed by the survivor`,
      async () => {
        const r = await onB.get(`/conversations/${id}?include=metrics`)
        return r.body.status !== 'in_progress' ? r.body : null
      },
      60_000,
      500,
    )
    expect(closed.status).toBe('completed')
    expect(closed.metrics.end_reason).toBe('interrupted')
    const open = await onB.get('/conversations?status=in_progress&channel=phone_inbound')
    expect(open.body.data).toEqual([])
  }, 120_000)
})
