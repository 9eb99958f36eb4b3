// Graceful shutdown (decisions "Graceful shutdown"): a SIGTERM lands while a chat turn is in flight. The
// instance drains (health 503) for SVC_SHUTDOWN_DELAY_SECONDS, closes its port, answers the turn, and
// exits 0. Runs on both engines (a server of its own).
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import type { Api } from '../helpers/api'
import { sleep } from '../helpers/wait'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

/** A POST whose body arrives in two halves `pauseMs` apart: the request is in flight for that long. */
function slowPost(url: string, headers: Record<string, string>, body: string, pauseMs: number) {
  const u = new URL(url)
  const data = Buffer.from(body)
  return new Promise<{ status: number; body: string; connection: string | undefined }>((done, fail) => {
    const req = request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { ...headers, 'content-length': String(data.length) },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }))
      },
    )
    req.on('error', fail)
    req.write(data.subarray(0, 5))
    setTimeout(() => req.end(data.subarray(5)), pauseMs)
  })
}

let seeded: SeededServer<Tenant>
let api: Api

beforeAll(async () => {
  seeded = await startSeededServer({
    env: { SVC_SHUTDOWN_DELAY_SECONDS: '1' },
    prepare: (master) => createTenant(master),
    agents: (t) => [{ accountId: t.accountId }],
  })
  api = seeded.as(seeded.prepared.key)
}, 240_000)
afterAll(async () => {
  await seeded?.server.stop('SIGKILL')
})

describe('SIGTERM with a chat turn in flight', () => {
  it('drains (health 503), answers the turn with 200 and Connection: close, and exits 0', async () => {
    verifies('shutdown.graceful')
    const { server } = seeded
    const conv = await api.post('/conversations', { agent_id: seeded.agentIds[0] })
    expect(conv.status, conv.text).toBe(201)
    const turn = slowPost(
      `${server.base}/conversations/${conv.body.conversation_id}/messages`,
      { authorization: `Bearer ${seeded.prepared.key}`, 'content-type': 'application/json' },
      JSON.stringify({ text: 'What do you sell?' }),
      2000,
    )
    await sleep(300)
    const signalledAt = Date.now()
    const exited = server.stop('SIGTERM')
    await sleep(200)
    // Draining: still listening for the configured second, but down for a balancer.
    const health = await fetch(`${server.base}/health`)
    const body = await health.json()
    expect(health.status).toBe(503)
    expect(body).toMatchObject({ status: 'down', components: { api: 'down', db: 'ok' } })
    const answered = await turn
    expect(answered.status, answered.body).toBe(200)
    expect(JSON.parse(answered.body).turn).toMatchObject({ speaker: 'agent' })
    expect(answered.connection).toBe('close')
    expect(await exited).toEqual({ code: 0, signal: null })
    // Bounded: the delay, the turn's remaining second, and the runtime's stop.
    expect(Date.now() - signalledAt).toBeLessThan(15_000)
    expect(server.logs.join('')).toContain('[shutdown] SIGTERM: draining')
  }, 60_000)
})
