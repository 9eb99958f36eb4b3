// The contract every blob provider meets: the host's boot check, then, given a context to open it with (a
// URL to a test bucket, a scratch folder), what the host relies on: bytes come back exactly as stored
// (every byte value, a megabyte, keys with slashes), a put replaces, a missing key is null, and removing
// (twice) forgets it without touching other keys.
import type { BlobProvider, BlobProviderContext, BlobStore } from '../blob.ts'
import { checkBlobProvider } from '../checks.ts'
import { type Check, check, ensure, show } from './checks.ts'

export interface BlobCheckOptions {
  /**
   * What the store is opened with (or a function answering it when the checks run, for a test server started
   * later); without it only the shape is checked (a store needs somewhere to write).
   */
  context?: BlobProviderContext | (() => BlobProviderContext)
}

const same = (a: Uint8Array | null, b: Uint8Array) =>
  a !== null && a.byteLength === b.byteLength && a.every((x, i) => x === b[i])

export function blobChecks(p: BlobProvider, opts: BlobCheckOptions = {}): Check[] {
  const name = `blob provider ${typeof p?.name === 'string' ? p.name : show(p?.name)}`
  const checks: Check[] = [
    check(`${name}: passes the host's boot checks`, () => {
      const problem = checkBlobProvider(p)
      ensure(problem === null, `the host would refuse it at boot: ${problem}`)
      ensure(/^[a-z][a-z0-9_-]{0,63}$/.test(p.name), `name ${show(p.name)} is not what SVC_BLOB_DRIVER can name`)
    }),
  ]
  const context = opts.context
  if (!context) return checks
  let opened: Promise<BlobStore> | undefined
  const store = () => {
    opened ??= Promise.resolve(p.open(typeof context === 'function' ? context() : context))
    return opened
  }
  // Keys of this run only, so a shared test bucket is not disturbed by another run.
  const run = `contract-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
  checks.push(
    check(
      `${name}: gives back exactly the bytes stored: every byte value, a megabyte, a key with slashes`,
      async () => {
        const s = await store()
        const all = Uint8Array.from({ length: 256 }, (_, i) => i)
        const big = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 2654435761) >>> 24)
        await s.put(`${run}/bytes`, all)
        await s.put(`${run}/uploads/acc_1/doc_1`, big)
        ensure(same(await s.get(`${run}/bytes`), all), 'the 256 byte values came back different')
        ensure(
          same(await s.get(`${run}/uploads/acc_1/doc_1`), big),
          'a megabyte under a key with slashes came back different',
        )
      },
    ),
    check(`${name}: a put replaces; a missing key is null`, async () => {
      const s = await store()
      await s.put(`${run}/replaced`, Uint8Array.of(1, 2, 3))
      await s.put(`${run}/replaced`, Uint8Array.of(9))
      ensure(same(await s.get(`${run}/replaced`), Uint8Array.of(9)), 'a second put did not replace the first')
      const missing = await s.get(`${run}/never-stored`)
      ensure(missing === null, `a key never stored answered ${show(missing)}, not null`)
    }),
    check(`${name}: remove forgets a key, twice without error, and leaves the others`, async () => {
      const s = await store()
      await s.put(`${run}/gone`, Uint8Array.of(1))
      await s.put(`${run}/kept`, Uint8Array.of(2))
      await s.remove(`${run}/gone`)
      await s.remove(`${run}/gone`)
      ensure((await s.get(`${run}/gone`)) === null, 'a removed key still answers bytes')
      ensure(same(await s.get(`${run}/kept`), Uint8Array.of(2)), 'removing one key changed another')
      for (const k of ['bytes', 'uploads/acc_1/doc_1', 'replaced', 'kept']) await s.remove(`${run}/${k}`)
    }),
  )
  return checks
}
