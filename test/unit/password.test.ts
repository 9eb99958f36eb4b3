// scrypt parameters (issue 12): N=2^17 in new hashes, old hashes still verify and are flagged for
// rehashing, stored parameters are bounded, and hashing runs off the event loop.
import { randomBytes, scryptSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashPassword, needsRehash, verifyPassword } from '~/lib/password'
import { verifies } from '../requirements'

const legacy = (pw: string, N: number) => {
  const salt = randomBytes(32)
  return `scrypt$${N}$8$1$${salt.toString('base64url')}$${scryptSync(pw, salt, 32, { N, r: 8, p: 1, maxmem: 256 * 1024 * 1024 }).toString('base64url')}`
}

describe('password hashing', () => {
  it('hashes with N=2^17, r=8, p=1 and stores the parameters; verifies only the right password', async () => {
    verifies('security.scrypt-params')
    const h = await hashPassword('correct horse battery')
    expect(h).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{43}\$[A-Za-z0-9_-]{43}$/)
    expect(needsRehash(h)).toBe(false)
    expect(await verifyPassword('correct horse battery', h)).toBe(true)
    expect(await verifyPassword('correct horse batterY', h)).toBe(false)
  }, 60_000)

  it('an older, weaker hash still verifies and needs rehashing; malformed or oversized parameters never verify', async () => {
    verifies('security.scrypt-params')
    const old = legacy('pw-123456789', 1 << 15)
    expect(await verifyPassword('pw-123456789', old)).toBe(true)
    expect(needsRehash(old)).toBe(true)
    expect(needsRehash('bcrypt$whatever')).toBe(true)
    const [, , r, p, salt, hash] = old.split('$')
    for (const bad of [
      `scrypt$${1 << 30}$${r}$${p}$${salt}$${hash}`,
      `scrypt$1000$${r}$${p}$${salt}$${hash}`,
      `scrypt$32768$64$${p}$${salt}$${hash}`,
      `scrypt$32768$8$1$${salt}`,
      'plain',
    ]) {
      expect(await verifyPassword('pw-123456789', bad), bad.slice(0, 20)).toBe(false)
    }
  }, 60_000)

  it('runs off the event loop: timers keep firing while a hash is computed', async () => {
    verifies('security.scrypt-params')
    let last = Date.now()
    let worst = 0
    const timer = setInterval(() => {
      const now = Date.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 10)
    const started = Date.now()
    await hashPassword('timing')
    const took = Date.now() - started
    clearInterval(timer)
    // A synchronous scrypt would stall the loop for the whole hash.
    expect(worst).toBeLessThan(Math.max(250, took / 2))
  }, 60_000)
})
