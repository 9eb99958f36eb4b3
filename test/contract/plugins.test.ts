// Runs the contract of its kind on EVERY plugin file, found by the build's own finder (scripts/
// plugin-files.mjs: ".ts" at any depth, not starting with "_"): a new file, in a subfolder or not, is
// checked without being listed anywhere.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { pluginFiles } from '../../scripts/plugin-files.mjs'
import { verifies } from '../requirements'
import { blobChecks, registerChecks } from '@svc/plugin-kit/testing'
import { testCapability } from './capability.contract'
import { testChatEngine } from './chat-engine.contract'
import { testVoiceProvider } from './voice.contract'
import { testSpeechProvider } from './speech.contract'
import { testMailer, type MailReceiver } from './mailer.contract'
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp'

const ROOT = resolve(import.meta.dirname, '../..')
// Engines whose calls need no network; the others get the shape contract and their own test with a fake server.
const OFFLINE_ENGINES = new Set(['local'])
// Speech providers that need no network (openai: test/plugins/openai-speech.test.ts runs the full contract
// against a local OpenAI-compatible server).
const OFFLINE_SPEECH = new Set(['simulated'])
// Mailers that send nowhere (the others get the shape contract).
const OFFLINE_MAILERS = new Set(['outbox'])

async function load(dir: string) {
  const files = pluginFiles(resolve(ROOT, dir))
  return Promise.all(files.map(async (file) => ({ file, plugin: (await import(resolve(ROOT, dir, file))).default })))
}

const kinds = {
  capabilities: await load('capabilities'),
  chat: await load('providers/chat'),
  voice: await load('providers/voice'),
  mail: await load('providers/mail'),
  speech: await load('providers/speech'),
  blob: await load('providers/blob'),
  telephony: await load('providers/telephony'),
}

describe('plugin files', () => {
  it('each kind has its plugins, each with a unique name', () => {
    verifies('plugins.contract')
    for (const [kind, list] of Object.entries(kinds)) {
      expect(list.length, kind).toBeGreaterThan(0)
      const names = list.map((x) => x.plugin?.name)
      expect(new Set(names).size, kind).toBe(names.length)
    }
    expect(kinds.capabilities.length).toBeGreaterThanOrEqual(5)
    expect(kinds.chat.map((x) => x.plugin.name)).toEqual(expect.arrayContaining(['local', 'openai']))
    expect(kinds.speech.map((x) => x.plugin.name)).toEqual(expect.arrayContaining(['simulated', 'openai']))
  })

  it('every provider that needs a network has its behaviour checked in a test of its own', () => {
    verifies('plugins.contract', 'plugins.contract.finder')
    // Only the offline ones run their behaviour here; any other file found in the folder, a new one
    // included, must be driven by a test under test/plugins against a fake server (speech: through the
    // kit's suite; smtp: by the real receiver below), or this fails naming it.
    const ownTests = readdirSync(resolve(ROOT, 'test/plugins')).map((f) =>
      readFileSync(resolve(ROOT, 'test/plugins', f), 'utf8'),
    )
    const networked = [
      ...kinds.chat
        .filter((x) => !OFFLINE_ENGINES.has(x.plugin.name))
        .map((x) => ({ dir: 'providers/chat', ...x, suite: '' })),
      ...kinds.speech
        .filter((x) => !OFFLINE_SPEECH.has(x.plugin.name))
        .map((x) => ({ dir: 'providers/speech', ...x, suite: 'testSpeechProvider(' })),
      ...kinds.telephony
        .filter((x) => x.plugin.name !== 'simulated')
        .map((x) => ({ dir: 'providers/telephony', ...x, suite: 'testTelephony' })),
    ]
    expect(networked.map((x) => `${x.dir}/${x.file}`)).toEqual(
      expect.arrayContaining([
        'providers/chat/openai.ts',
        'providers/speech/openai.ts',
        'providers/telephony/twilio.ts',
      ]),
    )
    const unchecked = networked
      .filter(({ dir, file, suite }) => {
        const from = `'../../${dir}/${file.replace(/\.ts$/, '')}'`
        return !ownTests.some((t) => t.includes(from) && t.includes(suite))
      })
      .map((x) => `${x.dir}/${x.file}`)
    expect(unchecked, 'providers that need a network and no test/plugins file runs').toEqual([])
  })

  it('voice ids are unique across providers', async () => {
    const ids = (await Promise.all(kinds.voice.map((x) => x.plugin.voices())))
      .flat()
      .map((v: { voice_id: string }) => v.voice_id)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

for (const { file, plugin } of kinds.capabilities) describe(`capabilities/${file}`, () => testCapability(plugin))
for (const { file, plugin } of kinds.chat)
  describe(`providers/chat/${file}`, () => testChatEngine(plugin, { offline: OFFLINE_ENGINES.has(plugin.name) }))
for (const { file, plugin } of kinds.voice) describe(`providers/voice/${file}`, () => testVoiceProvider(plugin))
for (const { file, plugin } of kinds.speech)
  describe(`providers/speech/${file}`, () => testSpeechProvider(plugin, { offline: OFFLINE_SPEECH.has(plugin.name) }))

// fs stores under a scratch folder; s3 needs a bucket (test/integration/single-instance.test.ts runs the
// same checks against a local S3-compatible server).
for (const { file, plugin } of kinds.blob)
  describe(`providers/blob/${file}`, () =>
    registerChecks(
      blobChecks(
        plugin,
        plugin.name === 'fs' ? { context: { url: null, dir: mkdtempSync(join(tmpdir(), 'svc-blob-')) } } : {},
      ),
      it,
    ))

describe('mailers', () => {
  let database: Database
  // The smtp mailer delivers to a real local receiver; it reads SMTP_URL through loadConfig (first call
  // here, so the env set now is what it sees; the data dir keeps any generated dev secret out of the repo).
  let smtp: SmtpReceiver
  beforeAll(async () => {
    const dir = resolve(ROOT, 'server/db/migrations')
    const migrations = readdirSync(dir)
      .filter((n) => n.endsWith('.sql'))
      .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
    database = await openDatabase({ url: process.env.DATABASE_URL, dataDir: mkdtempSync(join(tmpdir(), 'svc-mail-')) })
    await migrate(database, migrations)
    smtp = await startSmtpReceiver()
    process.env.SMTP_URL = smtp.url
    process.env.SVC_DATA_DIR = mkdtempSync(join(tmpdir(), 'svc-mail-cfg-'))
  }, 60_000)
  afterAll(async () => {
    await database?.close()
    await smtp?.close()
  })
  const receivers: Record<string, MailReceiver> = {
    smtp: { arrived: (id) => smtp.received.find((m) => m.header('X-Svc-Message-Id') === id) },
  }
  for (const { file, plugin } of kinds.mail) {
    describe(`providers/mail/${file}`, () =>
      testMailer(plugin, {
        offline: OFFLINE_MAILERS.has(plugin.name),
        database: () => database,
        receiver: receivers[plugin.name],
      }))
  }
})
