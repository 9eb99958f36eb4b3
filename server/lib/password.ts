// Passwords are hashed with scrypt (memory-hard, in node's crypto): N=2^17, r=8, p=1, 32-byte salt, the
// parameters stored in the hash (`scrypt$N$r$p$salt$hash`) so older, weaker hashes still verify and are
// upgraded on the next successful login (needsRehash). scrypt runs on libuv's thread pool, never on the
// event loop; N=2^17 with r=8 needs 128 MiB per run, so at most pool-size (4) runs hold memory at once.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  )

export const SCRYPT_PARAMS = { N: 1 << 17, r: 8, p: 1 } as const

// Node refuses a run whose 128·N·r bytes exceed maxmem; the margin covers its small extra buffers.
const maxmemFor = (N: number, r: number) => 128 * N * r + 16 * 1024 * 1024

// A stored hash is ours, but bound what it may ask for anyway (a corrupt row must not allocate gigabytes).
const MAX_N = 1 << 20
const MAX_R = 16
const MAX_P = 4

interface Parsed {
  N: number
  r: number
  p: number
  salt: Buffer
  hash: Buffer
}

function parse(stored: string): Parsed | null {
  const [scheme, n, r, p, salt, hash, extra] = stored.split('$')
  if (scheme !== 'scrypt' || extra !== undefined || !salt || !hash) return null
  const N = Number(n),
    R = Number(r),
    P = Number(p)
  if (!Number.isInteger(N) || N < 2 || N > MAX_N || (N & (N - 1)) !== 0) return null
  if (!Number.isInteger(R) || R < 1 || R > MAX_R || !Number.isInteger(P) || P < 1 || P > MAX_P) return null
  return { N, r: R, p: P, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') }
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = SCRYPT_PARAMS
  const salt = randomBytes(32)
  const key = await scrypt(password, salt, 32, { N, r, p, maxmem: maxmemFor(N, r) })
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const h = parse(stored)
  if (!h || h.hash.length < 16) return false
  const key = await scrypt(password, h.salt, h.hash.length, { N: h.N, r: h.r, p: h.p, maxmem: maxmemFor(h.N, h.r) })
  return timingSafeEqual(key, h.hash)
}

/** True when the stored hash uses weaker parameters than today's (or is not ours): rehash it after a good login. */
export function needsRehash(stored: string): boolean {
  const h = parse(stored)
  return !h || h.N < SCRYPT_PARAMS.N || h.r < SCRYPT_PARAMS.r || h.p < SCRYPT_PARAMS.p
}
