import { describe, expect, it } from 'vitest'
import { canonical, decodeCursor, encodeCursor, type CursorBinding } from '~/lib/cursor'
import { ApiError } from '~/lib/errors'
import { verifies } from '../requirements'

const secret = 's'.repeat(40)
const binding: CursorBinding = {
  route: 'GET /v1/users',
  filters: { status: 'active', account_id: ['acc_1'] },
  sort: '-created_at',
  limit: 50,
  credentialId: 'key_1',
}

async function invalid(p: Promise<unknown>) {
  const e = await p.catch((x) => x)
  expect(e).toBeInstanceOf(ApiError)
  expect(e).toMatchObject({ status: 400, code: 'invalid_cursor', field: 'cursor' })
}

describe('keyset cursor codec', () => {
  it('round-trips the position under the same binding', async () => {
    verifies('cursor.signed-and-bound')
    const c = await encodeCursor(['2026-11-22T10:00:00.000Z', 'usr_9'], binding, secret)
    expect(c).not.toContain('usr_9')
    expect(await decodeCursor(c, { ...binding, filters: { account_id: ['acc_1'], status: 'active' } }, secret)).toEqual(
      ['2026-11-22T10:00:00.000Z', 'usr_9'],
    )
  })

  it('refuses another filter set, sort, limit, credential, route or secret', async () => {
    verifies('cursor.signed-and-bound')
    const c = await encodeCursor([1], binding, secret)
    await invalid(decodeCursor(c, { ...binding, filters: { status: 'suspended', account_id: ['acc_1'] } }, secret))
    await invalid(decodeCursor(c, { ...binding, sort: 'created_at' }, secret))
    await invalid(decodeCursor(c, { ...binding, limit: 51 }, secret))
    await invalid(decodeCursor(c, { ...binding, credentialId: 'key_2' }, secret))
    await invalid(decodeCursor(c, { ...binding, route: 'GET /v1/accounts' }, secret))
    await invalid(decodeCursor(c, binding, 't'.repeat(40)))
  })

  it('refuses tampered and malformed cursors', async () => {
    verifies('cursor.signed-and-bound')
    const c = await encodeCursor([1], binding, secret)
    const [h, p, s] = c.split('.')
    const forged = Buffer.from(
      JSON.stringify({ v: 1, p: [999], b: JSON.parse(Buffer.from(p, 'base64url').toString()).b }),
    ).toString('base64url')
    await invalid(decodeCursor(`${h}.${forged}.${s}`, binding, secret))
    for (const bad of ['', 'abc', 'a.b.c', c + 'x']) await invalid(decodeCursor(bad, binding, secret))
  })

  it('canonical JSON ignores key order but not array order', () => {
    expect(canonical({ b: 1, a: [2, 1] })).toBe(canonical({ a: [2, 1], b: 1 }))
    expect(canonical({ a: [1, 2] })).not.toBe(canonical({ a: [2, 1] }))
  })
})
