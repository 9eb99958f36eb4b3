// Plugins from packages, as an outside author ships them: the kit and the example plugin are packed
// (`npm pack`, the kit compiled by its prepack), installed offline into a fresh temporary project, and the
// built server loads the example through SVC_PLUGINS by its package name (NODE_PATH points at the project's
// node_modules: the server runs from its data dir). Its capability fires in a chat turn with the local engine,
// its speech provider serves a simulated call, and its own tests run from its folder against the packed kit's
// contract suites. Broken packages, beside it in the same project, must each stop the boot with one line
// naming the SVC_PLUGINS entry, the plugin and the problem.
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { ENTRY, newMasterKey, startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const ROOT = resolve(import.meta.dirname, '../..')
const TO = `+1415556${String(1000 + (process.pid % 8000)).padStart(4, '0')}`

// npm as an author runs it: without the npm_* settings of a surrounding `npm test`.
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
const npm = (cwd: string, args: string[]) =>
  execFileSync('npm', args, { cwd, env: npmEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 })

/** A plugin folder in the project (so `@svc/plugin-kit` and valibot resolve from its node_modules). */
function writePlugin(project: string, name: string, index: string): string {
  const dir = join(project, 'local', name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', main: 'index.js' }))
  writeFileSync(join(dir, 'index.js'), index)
  return dir
}

const CAPABILITY = (name: string, extra = '') => `defineCapability({
  name: '${name}', description: 'Books a table.', parameters: v.strictObject({ n: v.number() }), needs: [],
  apiChat: true, outbound: false, example: { args: { n: 1 }, settings: {} },
  run: async () => ({ ok: true, message: 'ok' }), ${extra} })`
const HEAD = `import * as v from 'valibot'\nimport { definePlugin, defineCapability, defineSpeechProvider } from '@svc/plugin-kit'\n`

/** Boots the built server and expects it to stop: answers its exit code and stderr. */
function bootStops(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-plugin-boot-'))
  const child = spawn(process.execPath, [ENTRY], {
    cwd: dataDir,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_DATA_DIR: dataDir,
      SVC_MASTER_KEY: newMasterKey(),
      SVC_SECRET: `test-secret-${'x'.repeat(40)}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (c) => (stderr += c))
  child.stdout.resume()
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`the server did not stop in 30 s; stderr:\n${stderr}`))
    }, 30_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
      done({ code, stderr })
    })
  })
}

describe('plugin packages (SVC_PLUGINS)', () => {
  let dir: string
  let project: string
  let modules: string
  let server: TestServer
  let t: Tenant
  let site: TestSite
  let agentId: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-plugin-pkg-'))
    const packs = join(dir, 'packs')
    mkdirSync(packs)
    npm(join(ROOT, 'packages/kit'), ['pack', '--pack-destination', packs])
    npm(join(ROOT, 'examples/plugins/acme-booking'), ['pack', '--pack-destination', packs])
    // valibot is a peer of both, re2js and @valibot/to-json-schema the kit's dependencies; the offline cache
    // may not hold them, so the host's installed copies are packed too.
    for (const dep of ['valibot', 're2js', '@valibot/to-json-schema'])
      npm(ROOT, ['pack', '--ignore-scripts', '--pack-destination', packs, join(ROOT, 'node_modules', dep)])
    project = join(dir, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'plugin-host', private: true, type: 'module' }))
    const tarballs = readdirSync(packs).map((f) => join(packs, f))
    npm(project, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs])
    modules = join(project, 'node_modules')
    server = await startServer({ env: { SVC_PLUGINS: 'acme-booking', SVC_SPEECH: 'acme', NODE_PATH: modules } })
  }, 240_000)
  afterAll(async () => {
    await server?.stop()
    await site?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('the packed kit is compiled JavaScript with declarations and no host file', () => {
    verifies('plugins.kit.public')
    const kit = join(modules, '@svc/plugin-kit')
    expect(readdirSync(kit).sort()).toEqual(['README.md', 'dist', 'package.json'])
    for (const f of ['index.js', 'index.d.ts', 'plugin.js', 'capability.d.ts'])
      expect(existsSync(join(kit, 'dist', f)), f).toBe(true)
    expect(existsSync(join(modules, 'acme-booking/index.js'))).toBe(true)
  })

  it("lists the package's capability, and an agent can enable it", async () => {
    verifies('plugins.packages.load', 'plugins.packages.roundtrip')
    const master = createApi(server.base, server.masterKey)
    t = await createTenant(master)
    const caps = await t.api.get('/capabilities')
    expect(caps.status, caps.text).toBe(200)
    const book = caps.body.data.find((c: { name: string }) => c.name === 'book_table')
    expect(book).toMatchObject({ api_chat: true, outbound: true, needs: [] })
    expect(Object.keys(book.parameters.properties)).toEqual(expect.arrayContaining(['party_size', 'date', 'time']))
    // The in-tree capabilities are still there.
    expect(caps.body.data.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['capture_lead', 'transfer_call']),
    )

    site = await serveSite({
      '/': {
        body: html('Acme Bistro', '<h1>Acme Bistro</h1><p>Acme Bistro serves dinner every evening from six.</p>'),
      },
    })
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const patched = await t.api.patch(`/agents/${agentId}`, { capabilities: ['book_table'] })
    expect(patched.status, patched.text).toBe(200)
    expect((await t.api.get(`/agents/${agentId}`)).body.capabilities).toContain('book_table')
  })

  it("book_table fires in a chat turn with the local engine, through the package's intent", async () => {
    verifies('plugins.packages.roundtrip', 'plugins.intents.local-engine')
    expect(agentId).toBeTruthy()
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status, c.text).toBe(201)
    const r = await t.api.post(`/conversations/${c.body.conversation_id}/messages`, {
      text: 'Hello! I would like to book a table for 4 on 2027-03-14 at 19:30, please.',
    })
    expect(r.status, r.text).toBe(200)
    const tool = r.body.turns.find((x: { turn_type: string }) => x.turn_type === 'tool')?.tool
    expect(tool).toMatchObject({
      name: 'book_table',
      arguments: { party_size: 4, date: '2027-03-14', time: '19:30' },
      result: { ok: true, outcome: 'resolved' },
    })
    expect(r.body.turn.text).toContain('ACME-20270314-1930-4')
  })

  it("the package's own tests run from its folder against the packed kit's contract suites", () => {
    verifies('plugins.packages.roundtrip', 'plugins.contract.kit-suites')
    // Its source folder, tests included, inside the project: `@svc/plugin-kit/testing` resolves to the
    // packed kit in the project's node_modules, as it would for an author who installed it.
    const own = join(project, 'acme-booking')
    cpSync(join(ROOT, 'examples/plugins/acme-booking'), own, { recursive: true })
    const out = npm(own, ['test'])
    const count = (what: string) => Number(out.match(new RegExp(`^# ${what} (\\d+)$`, 'm'))?.[1])
    // The plugin check, five per capability, seven or more per speech provider, and book_table's own two.
    expect(count('pass'), out).toBeGreaterThanOrEqual(15)
    expect(count('fail'), out).toBe(0)
    expect(out).toMatch(/^\s*ok \d+ - capability book_table: runs its example/m)
    expect(out).toMatch(/^\s*ok \d+ - speech provider acme: its audio really is at the rate it is labelled/m)
  })

  it("SVC_SPEECH=acme: a simulated inbound call is heard and transcribed through the package's provider", async () => {
    verifies('plugins.packages.load', 'plugins.packages.roundtrip')
    expect(agentId).toBeTruthy()
    const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId, label: 'Bookings' })
    expect(num.status, num.text).toBe(201)
    const utterances = ['Hello, when do you serve dinner?', 'Thank you, goodbye.']
    const r = await t.api.post('/simulator/inbound-calls', { to: TO, from: '+14155550199', utterances })
    expect(r.status, r.text).toBe(202)
    const conv = await until(
      'the call to complete',
      async () => {
        const c = await t.api.get(`/conversations/${r.body.conversation_id}?include=transcript`)
        return c.body.status === 'completed' ? c.body : null
      },
      60_000,
    )
    // The caller spoke through acme and was transcribed by acme: its symbol order is its own (the host's
    // simulated codec reads none of it, test/plugins/acme-booking.test.ts), so the words come back only if
    // the packaged provider did both sides.
    const heard = conv.transcript
      .filter((x: { speaker: string }) => x.speaker === 'visitor')
      .map((x: { text: string }) => x.text)
    expect(heard).toEqual(utterances)
    expect(conv.transcript.some((x: { speaker: string }) => x.speaker === 'agent')).toBe(true)
  })

  it('a packaged blob provider, chosen by SVC_BLOB_DRIVER, keeps uploaded originals', async () => {
    verifies('plugins.packages.load', 'plugins.packages.blob')
    // It stores each blob as a file named by its key, in the folder the host gives it (SVC_BLOB_DIR).
    const tagged = writePlugin(
      project,
      'tagged-blob',
      `import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { definePlugin, defineBlobProvider } from '@svc/plugin-kit'
const file = (dir, key) => join(dir, 'tagged', encodeURIComponent(key))
export default definePlugin({ name: 'tagged', providers: { blob: [defineBlobProvider({
  name: 'tagged',
  async open({ dir }) {
    await mkdir(join(dir, 'tagged'), { recursive: true })
    return {
      put: (key, data) => writeFile(file(dir, key), data),
      get: (key) => readFile(file(dir, key)).catch((e) => { if (e.code === 'ENOENT') return null; throw e }),
      remove: (key) => rm(file(dir, key), { force: true }),
    }
  },
})] } })
`,
    )
    const blobDir = join(dir, 'tagged-blobs')
    const other = await startServer({ env: { SVC_PLUGINS: tagged, SVC_BLOB_DRIVER: 'tagged', SVC_BLOB_DIR: blobDir } })
    try {
      const tenant = await createTenant(createApi(other.base, other.masterKey))
      const agent = await buildAgent(tenant.api, tenant.accountId, `${site.origin}/`, { language: 'en' })
      const text = 'Acme Bistro takes bookings for up to twenty guests.'
      const form = new FormData()
      form.append('file', new Blob([text], { type: 'text/plain' }), 'bookings.txt')
      const res = await fetch(`${other.base}/agents/${agent}/kb/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}` },
        body: form,
      })
      expect(res.status, await res.clone().text()).toBe(202)
      const { doc_id } = await res.json()
      const doc = await until(`document ${doc_id} indexed`, async () => {
        const r = await tenant.api.get(`/agents/${agent}/kb/documents/${doc_id}`)
        return r.body.status !== 'processing' && r.body
      })
      // The ingest read the original back from the packaged store: it is indexed, and its file is there.
      expect(doc.status).toBe('indexed')
      const stored = readdirSync(join(blobDir, 'tagged')).filter((f) => decodeURIComponent(f).endsWith(doc_id))
      expect(stored).toHaveLength(1)
      expect(readFileSync(join(blobDir, 'tagged', stored[0]), 'utf8')).toBe(text)
    } finally {
      await other.stop()
    }
  }, 120_000)

  describe('a plugin package that cannot be used stops the boot with one line', () => {
    const oneLine = async (plugins: string, expected: string) => {
      const { code, stderr } = await bootStops({ SVC_PLUGINS: plugins, NODE_PATH: modules })
      expect(code).toBe(1)
      expect(stderr.trim()).toBe(`[boot] fatal: [plugins] ${expected}`)
    }

    it('not found, no default export, not a definePlugin value, failing the boot checks', async () => {
      verifies('plugins.packages.boot-errors')
      const missing = await bootStops({ SVC_PLUGINS: 'acme-bookings', NODE_PATH: modules })
      expect(missing.code).toBe(1)
      expect(missing.stderr.trim()).toMatch(
        /^\[boot\] fatal: \[plugins\] SVC_PLUGINS "acme-bookings": package not found from \S+ \(node_modules or NODE_PATH\); install it, or give its path$/,
      )
      const noDefault = writePlugin(project, 'no-default', `export const plugin = { name: 'x' }\n`)
      await oneLine(
        noDefault,
        `SVC_PLUGINS "${noDefault}": has no default export (it must \`export default definePlugin({...})\`)`,
      )
      const plain = writePlugin(project, 'plain-object', `export default { name: 'plain', capabilities: [] }\n`)
      await oneLine(
        plain,
        `SVC_PLUGINS "${plain}": its default export is not a definePlugin({...}) value from @svc/plugin-kit`,
      )
      const noDescription = writePlugin(
        project,
        'no-description',
        `${HEAD}export default definePlugin({ name: 'broken', capabilities: [${CAPABILITY('book_slot', "description: ''")}] })\n`,
      )
      await oneLine(
        noDescription,
        `SVC_PLUGINS "${noDescription}" (plugin broken): capability "book_slot": description must be a non-empty string`,
      )
      const noSynthesis = writePlugin(
        project,
        'half-speech',
        `${HEAD}export default definePlugin({ name: 'half', providers: { speech: [defineSpeechProvider({ name: 'half', transcribe: async () => ({ text: '', confidence: null }) })] } })\n`,
      )
      const badIntent = writePlugin(
        project,
        'bad-intent',
        `${HEAD}export default definePlugin({ name: 'intent', capabilities: [${CAPABILITY('book_slot', "intents: [{ pattern: 'for (?<guests>\\\\d+)' }]")}] })\n`,
      )
      await oneLine(
        badIntent,
        `SVC_PLUGINS "${badIntent}" (plugin intent): capability "book_slot": intent 1: its pattern's group "guests" is not a parameter (parameters: n)`,
      )
      await oneLine(
        noSynthesis,
        `SVC_PLUGINS "${noSynthesis}" (plugin half): speech provider "half": synthesize must be a function`,
      )
    })

    it('an unknown SVC_BLOB_DRIVER, and a blob store that does not open', async () => {
      verifies('plugins.packages.blob', 'plugins.packages.boot-errors')
      const unknown = await bootStops({ SVC_BLOB_DRIVER: 'tagged' })
      expect(unknown.code).toBe(1)
      expect(unknown.stderr.trim()).toBe(
        '[boot] fatal: [config] SVC_BLOB_DRIVER="tagged" names no blob provider (known: fs, s3)',
      )
      const broken = writePlugin(
        project,
        'broken-blob',
        `${HEAD}export default definePlugin({ name: 'vault', providers: { blob: [{ name: 'vault', open() { throw new Error('VAULT_URL is not set') } }] } })\n`,
      )
      const closed = await bootStops({ SVC_PLUGINS: broken, SVC_BLOB_DRIVER: 'vault', NODE_PATH: modules })
      expect(closed.code).toBe(1)
      expect(closed.stderr.trim()).toBe(
        '[boot] fatal: [config] SVC_BLOB_DRIVER="vault": the store did not open: VAULT_URL is not set',
      )
    })

    it('two plugins with one name, and a name an in-tree file or another package already defines', async () => {
      verifies('plugins.packages.duplicate', 'plugins.packages.boot-errors')
      const twin = writePlugin(project, 'acme-twin', `${HEAD}export default definePlugin({ name: 'acme' })\n`)
      await oneLine(
        `acme-booking,${twin}`,
        `SVC_PLUGINS "${twin}" (plugin acme): plugin name "acme" is already used by SVC_PLUGINS "acme-booking" (plugin acme)`,
      )
      const clash = writePlugin(
        project,
        'clash',
        `${HEAD}export default definePlugin({ name: 'clash', capabilities: [${CAPABILITY('transfer_call')}] })\n`,
      )
      await oneLine(
        clash,
        `SVC_PLUGINS "${clash}" (plugin clash): capability "transfer_call" is already defined by capabilities/transfer.ts`,
      )
      const echo = writePlugin(
        project,
        'echo',
        `${HEAD}export default definePlugin({ name: 'echo', capabilities: [${CAPABILITY('book_table')}] })\n`,
      )
      await oneLine(
        `acme-booking,${echo}`,
        `SVC_PLUGINS "${echo}" (plugin echo): capability "book_table" is already defined by SVC_PLUGINS "acme-booking" (plugin acme)`,
      )
    })
  })
})
