// A client generated from the served OpenAPI document, as a customer would make one (issue 37): the document
// validates (swagger-parser) and lints clean (Redocly's recommended rules), openapi-typescript turns it into
// types, a small openapi-fetch script compiles against them under tsc --strict and then runs against the
// server: create a user and a key, build an agent from a local site, chat, page with a cursor, read a webhook
// delivery. A document that lies about a body, a parameter or a response breaks the compile or the run.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { serveBakery, type TestSite } from '../helpers/site'
import { verifies } from '../requirements'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')

// The script a customer would write; every call is typed by the generated `paths`.
const SCRIPT = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(\`\${name} is not set\`)
  return value
}
const BASE = env('BASE')
const SITE_URL = env('SITE_URL')
const RECEIVER_URL = env('RECEIVER_URL')

function must<T>(r: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (r.data === undefined) throw new Error(\`\${what}: \${r.response.status} \${JSON.stringify(r.error)}\`)
  return r.data
}
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms))

async function main(): Promise<void> {
  const master = createClient<paths>({ baseUrl: BASE, headers: { authorization: \`Bearer \${env('MASTER_KEY')}\` } })
  const user = must(
    await master.POST('/users', { body: { email: env('EMAIL'), password: 'generated-client-pw-1', plan: 'starter' } }),
    'create user',
  )
  const key = must(
    await master.POST('/users/{usr}/credentials', {
      params: { path: { usr: user.user_id } },
      body: { name: 'generated', scopes: ['agents:read', 'agents:write', 'conversations:read', 'conversations:write', 'webhooks:manage'] },
    }),
    'create key',
  )
  const secret: string | undefined = key.secret
  if (!secret) throw new Error('the new key has no secret')
  const api = createClient<paths>({ baseUrl: BASE, headers: { authorization: \`Bearer \${secret}\` } })

  const hook = must(
    await api.POST('/webhooks/endpoints', { body: { url: RECEIVER_URL, events: ['conversation.started'] } }),
    'create endpoint',
  )

  const voices = must(await api.GET('/voices'), 'voices')
  const voice = voices.data[0]
  if (!voice) throw new Error('no voice in the catalogue')
  const started = must(
    await api.POST('/accounts/{acc}/agents/build', {
      params: { path: { acc: user.account_id } },
      body: { website_url: SITE_URL, voice_id: voice.voice_id },
    }),
    'build',
  )
  const agentId: string = started.agent_id
  for (let i = 0; ; i++) {
    const build = must(await api.GET('/agents/{agt}/build', { params: { path: { agt: agentId } } }), 'read build')
    if (build.status === 'succeeded') break
    if (build.status === 'failed' || i > 180) throw new Error(\`build \${build.status}\`)
    await pause(250)
  }

  const ids: string[] = []
  for (const text of ['Do you bake sourdough?', 'How much is a dozen croissants?']) {
    const conv = must(await api.POST('/conversations', { body: { agent_id: agentId } }), 'start conversation')
    const answer = must(
      await api.POST('/conversations/{conv}/messages', {
        params: { path: { conv: conv.conversation_id } },
        body: { text },
      }),
      'chat',
    )
    if (!answer.turns.length) throw new Error('no turn in the answer')
    ids.push(conv.conversation_id)
  }

  const seen: string[] = []
  let cursor: string | undefined
  do {
    const page = must(
      await api.GET('/conversations', { params: { query: { agent_id: [agentId], limit: 1, cursor } } }),
      'list conversations',
    )
    const limit: number = page.pagination.limit
    if (limit !== 1) throw new Error(\`pagination.limit \${limit}\`)
    for (const c of page.data) seen.push(c.conversation_id)
    cursor = page.pagination.next_cursor ?? undefined
    if (page.pagination.has_more !== (cursor !== undefined)) throw new Error('has_more disagrees with next_cursor')
  } while (cursor)
  if (seen.length !== 2 || !ids.every((id) => seen.includes(id))) throw new Error(\`paged \${seen.join(', ')}\`)

  let deliveryId: string | undefined
  for (let i = 0; i < 120 && !deliveryId; i++) {
    const list = must(
      await api.GET('/webhooks/deliveries', { params: { query: { endpoint_id: hook.endpoint_id, limit: 10 } } }),
      'list deliveries',
    )
    deliveryId = list.data.find((d) => d.status === 'succeeded')?.delivery_id
    if (!deliveryId) await pause(250)
  }
  if (!deliveryId) throw new Error('no delivery succeeded')
  const delivery = must(
    await api.GET('/webhooks/deliveries/{dlv}', { params: { path: { dlv: deliveryId } } }),
    'read delivery',
  )
  const at: string = delivery.created_at
  console.log(JSON.stringify({ agent: agentId, conversations: seen, delivery: delivery.delivery_id, event: delivery.event_type, at }))
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
`

describe('a client generated from /v1/openapi.json', () => {
  let doc: any
  let text: string
  let site: TestSite
  let rx: Receiver
  let dir: string

  beforeAll(async () => {
    const res = await fetch(`${inject('base')}/openapi.json`)
    text = await res.text()
    doc = JSON.parse(text)
    site = await serveBakery('Generated Bakery', 'Lyon')
    rx = await startReceiver()
    dir = mkdtempSync(join(tmpdir(), 'svc-test-client-'))
    // The script resolves openapi-fetch as an installed package would.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  })
  afterAll(async () => {
    await site?.close()
    await rx?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('validates with swagger-parser and passes the Redocly recommended rules with no error', async () => {
    verifies('openapi.generated-client', 'openapi.document')
    await SwaggerParser.validate(structuredClone(doc))
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error')
    expect(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location?.[0]?.pointer}`)).toEqual([])
  })

  it('generates types, compiles a typed openapi-fetch script under tsc --strict and runs it against the server', async () => {
    verifies('openapi.generated-client')
    writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(doc)))
    writeFileSync(join(dir, 'client.mts'), SCRIPT)
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    const flags = ['--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022']
    const compiled = await run(process.execPath, [tsc, ...flags, '--skipLibCheck', 'client.mts'], { cwd: dir }).catch(
      (e: { stdout?: string; stderr?: string }) => ({ failed: `${e.stdout}${e.stderr}` }),
    )
    expect('failed' in compiled ? compiled.failed : '').toBe('')
    const { stdout } = await run(process.execPath, [join(dir, 'client.mjs')], {
      cwd: dir,
      timeout: 120_000,
      env: {
        ...process.env,
        BASE: inject('base'),
        MASTER_KEY: inject('masterKey'),
        SITE_URL: site.origin,
        RECEIVER_URL: rx.url('/generated'),
        EMAIL: `generated-${process.pid}-${Date.now()}@example.com`,
      },
    })
    const out = JSON.parse(stdout.trim().split('\n').pop() as string)
    expect(out.conversations).toHaveLength(2)
    expect(out.event).toBe('conversation.started')
    expect(out.delivery).toMatch(/^dlv_/)
  }, 180_000)
})
