// One instance configured as a member of a cluster, on both engines (a server of its own): its blobs in an
// S3-compatible store through unstorage's s3 driver (decisions "Blob storage"), and its graceful shutdown
// (decisions "Graceful shutdown"): a SIGTERM lands while a chat turn is in flight; the instance drains
// (health 503) for SVC_SHUTDOWN_DELAY_SECONDS, closes its port, answers the turn, and exits 0.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import type { Api } from '../helpers/api'
import { blobChecks, registerChecks } from '@svc/plugin-kit/testing'
import s3Provider from '../../providers/blob/s3'
import { startS3Stub, type S3Stub } from '../helpers/s3-stub'
import { startServer } from '../helpers/server'
import { refused, VoiceChatClient } from '../helpers/voice-chat'
import { sleep, until } from '../helpers/wait'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { openWidget } from '../helpers/widget'

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
let s3: S3Stub

beforeAll(async () => {
  s3 = await startS3Stub()
  seeded = await startSeededServer({
    env: { SVC_SHUTDOWN_DELAY_SECONDS: '1', SVC_BLOB_DRIVER: 's3', SVC_BLOB_URL: s3.url },
    prepare: (master) => createTenant(master),
    agents: (t) => [{ accountId: t.accountId }],
  })
  api = seeded.as(seeded.prepared.key)
}, 240_000)
afterAll(async () => {
  await seeded?.server.stop('SIGKILL')
  await s3?.close()
})

describe('blobs in an S3-compatible store (SVC_BLOB_DRIVER=s3)', () => {
  describe('the s3 provider meets the blob contract (kit blobChecks) against the bucket', () =>
    registerChecks(blobChecks(s3Provider, { context: () => ({ url: s3.url, dir: '' }) }), it))

  it('an uploaded file is stored in the bucket, signed, and read back by the ingest job', async () => {
    verifies('blobs.driver')
    const text = 'Example Co ships parcels to Norway within five working days.'
    const form = new FormData()
    form.append('file', new Blob([text], { type: 'text/plain' }), 'shipping.txt')
    const res = await fetch(`${seeded.server.base}/agents/${seeded.agentIds[0]}/kb/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.prepared.key}` },
      body: form,
    })
    expect(res.status, await res.clone().text()).toBe(202)
    const { doc_id } = await res.json()
    const doc = await until(`document ${doc_id} indexed`, async () => {
      const r = await api.get(`/agents/${seeded.agentIds[0]}/kb/documents/${doc_id}`)
      return r.body.status !== 'processing' && r.body
    })
    expect(doc.status).toBe('indexed')
    // The original is an object in the bucket, nowhere else; the ingest read it from there.
    const stored = [...s3.objects.entries()].filter(([key]) => key.endsWith(doc_id))
    expect(stored.map(([, data]) => data.toString())).toEqual([text])
    const mine = s3.requests.filter((r) => r.key.endsWith(doc_id))
    expect(mine.map((r) => `${r.method} ${r.status}`)).toEqual(expect.arrayContaining(['PUT 200', 'GET 200']))
    expect(s3.requests.some((r) => r.status === 403)).toBe(false)
  }, 60_000)

  it('SVC_BLOB_DRIVER=s3 without a usable SVC_BLOB_URL stops the boot with a message saying what is missing', async () => {
    verifies('blobs.driver')
    const boot = (env: Record<string, string>) =>
      startServer({ env: { SVC_BLOB_DRIVER: 's3', ...env } }).then(
        async (s) => {
          await s.stop('SIGKILL')
          return 'booted'
        },
        (err: Error) => err.message,
      )
    expect(await boot({})).toContain('SVC_BLOB_DRIVER=s3 requires SVC_BLOB_URL')
    expect(await boot({ SVC_BLOB_URL: 'https://s3.example.com/bucket' })).toContain(
      'SVC_BLOB_URL must carry the access key id and secret',
    )
  }, 60_000)
})

describe('SIGTERM with a voice session live and a chat turn in flight', () => {
  it('drains (health 503, new sessions refused), waits for the session, answers the turn with Connection: close, exits 0', async () => {
    verifies('shutdown.graceful')
    const { server } = seeded
    const agentId = seeded.agentIds[0]
    const widgetToken = await openWidget(api, agentId, { allowed_domains: ['shop.example.com'] })
    const voice = () =>
      VoiceChatClient.connect(
        `${server.origin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(widgetToken)}`,
        { origin: 'https://shop.example.com' },
      )
    const session = await voice()
    if (refused(session)) throw new Error(`voice refused: ${JSON.stringify(session)}`)
    await session.waitFor((x) => x.of('ready').length === 1, 15_000, 'ready')
    const conv = await api.post('/conversations', { agent_id: agentId })
    expect(conv.status, conv.text).toBe(201)
    const turn = slowPost(
      `${server.base}/conversations/${conv.body.conversation_id}/messages`,
      { authorization: `Bearer ${seeded.prepared.key}`, 'content-type': 'application/json' },
      JSON.stringify({ text: 'What do you sell?' }),
      5000,
    )
    await sleep(300)
    const signalledAt = Date.now()
    const exited = server.stop('SIGTERM')
    await sleep(200)
    // Draining: still listening, but down for a balancer, and no new session.
    const health = await fetch(`${server.base}/health`)
    expect(health.status).toBe(503)
    expect(await health.json()).toMatchObject({ status: 'down', components: { api: 'down', db: 'ok' } })
    const late = await voice()
    expect(refused(late) && late.status).toBe(503)
    // Past the 1 s delay the port stays open while the session lives: it is waited for, not cut.
    await sleep(1500)
    expect(session.closed).toBe(false)
    expect((await fetch(`${server.base}/health`)).status).toBe(503)
    session.stop()
    await session.waitFor((x) => x.closed, 10_000, 'the session to end')
    const answered = await turn
    expect(answered.status, answered.body).toBe(200)
    expect(JSON.parse(answered.body).turn).toMatchObject({ speaker: 'agent' })
    expect(answered.connection).toBe('close')
    expect(await exited).toEqual({ code: 0, signal: null })
    // Bounded: the delay, the session, the turn's remaining seconds, and the runtime's stop.
    expect(Date.now() - signalledAt).toBeLessThan(20_000)
    expect(server.logs.join('')).toContain('[shutdown] SIGTERM: draining')
  }, 60_000)
})
