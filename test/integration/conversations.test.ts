// Conversation domain functions on a real database (in-process PGlite, or PostgreSQL with DATABASE_URL):
// the retention sweep (tombstones and conversation.deleted events, batched), the inbound phone history
// block (recentCallsFor) and signed recording URLs.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { and, eq, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { accounts, conversations, dncEntries, events } from '~/db/schema'
import { createUser } from '~/domain/users/users'
import { sweepRetention } from '~/domain/conversations/retention'
import { recentCallsFor } from '~/domain/conversations/import'
import { addOptOut } from '~/domain/calls/dnc'
import { getRecording, verifyRecordingToken } from '~/domain/conversations/read'
import { emitEvent } from '~/domain/events/emit'
import { verifies } from '../requirements'

const dir = resolve('server/db/migrations')
const migrations = readdirSync(dir)
  .filter((n) => n.endsWith('.sql'))
  .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
let db: Database
const DAY = 86_400_000
const NOW = new Date('2026-11-22T12:00:00Z')
const daysAgo = (d: number) => new Date(NOW.getTime() - d * DAY)

beforeAll(async () => {
  db = await openDatabase({ url: process.env.DATABASE_URL, dataDir: mkdtempSync(join(tmpdir(), 'svc-conv-')) })
  await migrate(db, migrations)
})
afterAll(async () => {
  await db?.close()
})

const newAccount = async () =>
  (
    await createUser(db, {
      email: `c-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
      plan: 'starter',
      currency_code: 'USD',
    })
  ).account_id

async function insertConv(
  accountId: string,
  o: {
    startedAt: Date
    endedAt?: Date | null
    channel?: string
    sessionId?: string
    phone?: string
    outcome?: string
    text?: string
    recording?: Record<string, unknown>
    metrics?: Record<string, unknown>
  },
) {
  const [row] = await db.db
    .insert(conversations)
    .values({
      id: sql`'conv_u' || nextval('conversation_seq')`,
      accountId,
      agentType: 'phone',
      channel: o.channel ?? 'phone_inbound',
      status: 'completed',
      sessionId: o.sessionId ?? `imp_${ulid()}`,
      startedAt: o.startedAt,
      endedAt: o.endedAt === undefined ? o.startedAt : o.endedAt,
      identity: o.phone ? { phone_e164: o.phone } : {},
      hasIdentity: !!o.phone,
      outcome: o.outcome ?? 'resolved',
      summary: { text: o.text ?? 'x', outcome: o.outcome ?? 'resolved' },
      summaryStatus: 'ready',
      hasRecording: !!o.recording,
      recording: o.recording ?? null,
      ...(o.metrics ? { metrics: o.metrics } : {}),
    })
    .returning({ id: conversations.id })
  return row.id
}

describe('retention sweep', () => {
  it('soft-deletes conversations past transcript_retention_days, in batches, with tombstones and events', async () => {
    verifies('conversations.retention', 'conversations.deleted')
    const acc = await newAccount()
    const keep = await newAccount()
    await db.db.update(accounts).set({ transcriptRetentionDays: 7 }).where(eq(accounts.id, acc))
    const old = [
      await insertConv(acc, { startedAt: daysAgo(30) }),
      await insertConv(acc, { startedAt: daysAgo(9) }),
      await insertConv(acc, { startedAt: daysAgo(8) }),
    ]
    const openOld = await insertConv(acc, { startedAt: daysAgo(20), endedAt: null })
    const endedRecently = await insertConv(acc, { startedAt: daysAgo(10), endedAt: daysAgo(6) })
    const fresh = await insertConv(acc, { startedAt: daysAgo(2) })
    const otherAccount = await insertConv(keep, { startedAt: daysAgo(300) })
    const n = await sweepRetention(db, { now: NOW, batchSize: 2, accountId: acc })
    expect(n).toBe(4)
    const rows = await db.db
      .select({ id: conversations.id, deletedAt: conversations.deletedAt, reason: conversations.deleteReason })
      .from(conversations)
      .where(sql`${conversations.accountId} IN (${acc}, ${keep})`)
    const deleted = rows
      .filter((r) => r.deletedAt)
      .map((r) => r.id)
      .sort()
    expect(deleted).toEqual([...old, openOld].sort())
    expect(rows.filter((r) => r.deletedAt).every((r) => r.reason === 'retention')).toBe(true)
    for (const id of [endedRecently, fresh, otherAccount]) expect(rows.find((r) => r.id === id)!.deletedAt).toBeNull()
    const evs = await db.db
      .select()
      .from(events)
      .where(and(eq(events.accountId, acc), eq(events.type, 'conversation.deleted')))
    expect(evs).toHaveLength(4)
    expect(evs[0].payload).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      type: 'conversation.deleted',
      api_version: 'v1',
      account_id: acc,
      data: {
        conversation_id: expect.stringMatching(/^conv_u/),
        account_id: acc,
        deleted_at: NOW.toISOString(),
        reason: 'retention',
      },
    })
    // A second run finds nothing more.
    expect(await sweepRetention(db, { now: NOW, accountId: acc })).toBe(0)
  })
})

describe('inbound phone history block', () => {
  it('answers the last 3 imported or outbound calls with that number within 30 days, newest first, with their direction', async () => {
    verifies('conversations.import', 'contract.smaller-points')
    const acc = await newAccount()
    const phone = '+14155550199'
    // Imports are on channel import, their direction in metrics (POST /conversations/import).
    const imported = (direction: string) => ({ channel: 'import', metrics: { imported: true, direction } })
    const c40 = await insertConv(acc, { startedAt: daysAgo(40), phone, text: 'too old', ...imported('inbound') })
    const c20 = await insertConv(acc, {
      startedAt: daysAgo(20),
      phone,
      outcome: 'unresolved',
      text: 'twenty',
      ...imported('inbound'),
    })
    const c10 = await insertConv(acc, {
      startedAt: daysAgo(10),
      phone,
      channel: 'phone_outbound',
      sessionId: `out_${ulid()}`,
      outcome: 'no_answer',
      text: 'ten',
    })
    const c5 = await insertConv(acc, {
      startedAt: daysAgo(5),
      phone,
      outcome: 'lead_captured',
      text: 'five',
      ...imported('outbound'),
    })
    // An inbound call answered here (an import made before imports had their own channel looks the same).
    const c1 = await insertConv(acc, { startedAt: daysAgo(1), phone, text: 'one' })
    await insertConv(acc, { startedAt: daysAgo(2), phone: '+14155550100', text: 'another number' })
    await insertConv(acc, {
      startedAt: daysAgo(3),
      phone,
      channel: 'widget',
      sessionId: `api_${ulid()}`,
      text: 'not a call',
    })
    const deleted = await insertConv(acc, { startedAt: daysAgo(0.5), phone, text: 'deleted' })
    await db.db.update(conversations).set({ deletedAt: NOW, deleteReason: 'api' }).where(eq(conversations.id, deleted))
    const later = await insertConv(acc, { startedAt: new Date(NOW.getTime() + 3600_000), phone, text: 'future' })
    const calls = await recentCallsFor(db, acc, phone, NOW)
    expect(calls).toEqual([
      {
        conversation_id: c1,
        date: daysAgo(1).toISOString(),
        direction: 'inbound',
        outcome: 'resolved',
        summary: 'one',
      },
      {
        conversation_id: c5,
        date: daysAgo(5).toISOString(),
        direction: 'outbound',
        outcome: 'lead_captured',
        summary: 'five',
      },
      {
        conversation_id: c10,
        date: daysAgo(10).toISOString(),
        direction: 'outbound',
        outcome: 'no_answer',
        summary: 'ten',
      },
    ])
    const older = await recentCallsFor(db, acc, phone, daysAgo(4))
    expect(older.map((c) => c.conversation_id)).toEqual([c5, c10, c20])
    expect(older.map((c) => c.direction)).toEqual(['outbound', 'outbound', 'inbound'])
    expect(older.map((c) => c.conversation_id)).not.toContain(c40)
    expect(await recentCallsFor(db.db, await newAccount(), phone, NOW)).toEqual([])
    // The call being answered is left out of its own block.
    expect((await recentCallsFor(db, acc, phone, NOW, c1)).map((c) => c.conversation_id)).toEqual([c5, c10, c20])
    expect(later).toBeTruthy()
  })
})

describe('do-not-call opt-out', () => {
  it('lists a caller who opts out once per account, source opt_out, and keeps an existing entry as it is', async () => {
    verifies('calls.session-rules')
    const acc = await newAccount()
    const other = await newAccount()
    await addOptOut(db, acc, '+14155550199', 'conv_u1')
    await addOptOut(db, acc, '+14155550199', 'conv_u2')
    await addOptOut(db, other, '+14155550199', 'conv_u3')
    const rows = await db.db.select().from(dncEntries).where(eq(dncEntries.phoneE164, '+14155550199'))
    const mine = rows.filter((r) => r.accountId === acc)
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ source: 'opt_out', id: expect.stringMatching(/^dnc_\d+$/) })
    expect(mine[0].reason).toContain('conv_u1')
    expect(rows.filter((r) => r.accountId === other)).toHaveLength(1)
  })
})

describe('recording URL', () => {
  it('is a short-lived HS256-signed media URL, verifiable only for its sid and secret', async () => {
    verifies('conversations.read')
    const acc = await newAccount()
    const id = await insertConv(acc, { startedAt: daysAgo(1), recording: { sid: 'rec_abc', duration_s: 42 } })
    const r = await getRecording(db.db, [acc], id, { secret: 's3cret', publicUrl: 'https://api.example.com', now: NOW })
    expect(r).toMatchObject({
      conversation_id: id,
      duration_s: 42,
      expires_at: new Date(NOW.getTime() + 900_000).toISOString(),
    })
    expect(r.url).toMatch(
      /^https:\/\/api\.example\.com\/v1\/media\/recordings\/rec_abc\.mp3\?token=[\w-]+\.[\w-]+\.[\w-]+$/,
    )
    const token = new URL(r.url).searchParams.get('token')!
    // Issued at NOW (in the past), so it has already expired for the real clock.
    expect(await verifyRecordingToken(token, 'rec_abc', 's3cret')).toBeNull()
    const live = await getRecording(db.db, [acc], id, { secret: 's3cret', publicUrl: 'https://api.example.com' })
    const liveToken = new URL(live.url).searchParams.get('token')!
    expect(await verifyRecordingToken(liveToken, 'rec_abc', 's3cret')).toEqual({ conv: id, acc })
    expect(await verifyRecordingToken(liveToken, 'rec_other', 's3cret')).toBeNull()
    expect(await verifyRecordingToken(liveToken, 'rec_abc', 'other')).toBeNull()
    await expect(getRecording(db.db, ['acc_0'], id, { secret: 's', publicUrl: 'x' })).rejects.toMatchObject({
      status: 404,
    })
  })

  it("emitEvent writes the decisions payload in the caller's transaction", async () => {
    const acc = await newAccount()
    await expect(
      db.tx(async (tx) => {
        await emitEvent(tx, { accountId: acc, type: 'conversation.started', data: { conversation_id: 'conv_p1' } })
        throw new Error('rollback')
      }),
    ).rejects.toThrow('rollback')
    expect(await db.db.select().from(events).where(eq(events.accountId, acc))).toEqual([])
    const p = await db.tx((tx) =>
      emitEvent(tx, { accountId: acc, type: 'conversation.started', data: { conversation_id: 'conv_p1' } }),
    )
    const [row] = await db.db.select().from(events).where(eq(events.accountId, acc))
    expect(row.payload).toEqual(p)
    expect(p).toMatchObject({
      type: 'conversation.started',
      api_version: 'v1',
      account_id: acc,
      data: { conversation_id: 'conv_p1' },
    })
  })
})
