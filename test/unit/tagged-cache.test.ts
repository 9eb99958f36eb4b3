// The cache behind the principal, account and limits caches, and the bus that drops its entries.
import { describe, expect, it } from 'vitest'
import { createInvalidationBus } from '~/db/bus'
import { TaggedCache } from '~/lib/tagged-cache'
import { verifies } from '../requirements'

describe('TaggedCache', () => {
  it('drops every entry carrying an invalidated tag, and only those', () => {
    verifies('cache.principal.same-instance')
    const c = new TaggedCache<string>({ ttlMs: 60_000, max: 10 })
    c.set('a', 'A', ['key:1', 'acc:1'], c.begin())
    c.set('b', 'B', ['key:2', 'acc:1'], c.begin())
    c.set('c', 'C', ['key:3', 'acc:2'], c.begin())
    c.invalidate(['key:2'])
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual(['A', undefined, 'C'])
    c.invalidate(['acc:1'])
    expect([c.get('a'), c.get('c')]).toEqual([undefined, 'C'])
    c.invalidate(['*'])
    expect(c.size).toBe(0)
  })

  it('refuses a value whose read began before an invalidation (a read racing a revocation)', () => {
    const c = new TaggedCache<string>({ ttlMs: 60_000, max: 10 })
    const generation = c.begin()
    c.invalidate(['key:9'])
    expect(c.set('k', 'stale', ['key:1'], generation)).toBe(false)
    expect(c.get('k')).toBeUndefined()
    expect(c.set('k', 'fresh', ['key:1'], c.begin())).toBe(true)
    expect(c.get('k')).toBe('fresh')
  })

  it('read() loads once, keeps what it loaded, never caches null, and drops a load raced by an invalidation', async () => {
    const c = new TaggedCache<string>({ ttlMs: 60_000, max: 10 })
    let loads = 0
    const load = async () => {
      loads++
      return 'v'
    }
    expect(await c.read('k', load, () => ['t:1'])).toBe('v')
    expect(await c.read('k', load, () => ['t:1'])).toBe('v')
    expect(loads).toBe(1)
    expect(
      await c.read(
        'none',
        async () => null,
        () => [],
      ),
    ).toBeNull()
    expect(c.get('none')).toBeUndefined()
    const raced = await c.read(
      'r',
      async () => {
        c.invalidate(['t:9'])
        return 'old'
      },
      () => ['t:2'],
    )
    expect(raced).toBe('old')
    expect(c.get('r')).toBeUndefined()
  })

  it('expires entries after the TTL or the caller’s own deadline, and holds at most max entries', () => {
    const c = new TaggedCache<number>({ ttlMs: 1_000, max: 2 })
    c.set('ttl', 1, [], c.begin(), undefined, 0)
    c.set('deadline', 2, [], c.begin(), 100, 0)
    expect(c.get('ttl', 999)).toBe(1)
    expect(c.get('deadline', 100)).toBeUndefined()
    expect(c.get('ttl', 1_000)).toBeUndefined()
    c.set('x', 1, ['t'], c.begin())
    c.set('y', 2, ['t'], c.begin())
    c.set('z', 3, ['t'], c.begin())
    expect([c.get('x'), c.get('y'), c.get('z')]).toEqual([undefined, 2, 3])
  })
})

describe('invalidation bus', () => {
  it('delivers a publish locally at once, sends it on every transport, and skips its own echo', async () => {
    verifies('cache.principal.same-instance')
    const bus = createInvalidationBus()
    const seen: string[][] = []
    bus.subscribe((tags) => seen.push([...tags]))
    const sent: string[] = []
    bus.addTransport(async (payload) => sent.push(payload))
    await bus.publish(['key:1', 'acc:2'])
    expect(seen).toEqual([['key:1', 'acc:2']])
    expect(sent).toHaveLength(1)
    bus.receive(sent[0]) // our own message coming back from PostgreSQL or Redis
    expect(seen).toHaveLength(1)
    bus.receive(JSON.stringify({ i: 'db', t: ['user:3'] })) // a row trigger
    bus.receive('not json')
    expect(seen).toEqual([['key:1', 'acc:2'], ['user:3']])
  })

  it('splits a large invalidation into messages under the NOTIFY payload limit', async () => {
    const bus = createInvalidationBus()
    const sent: string[] = []
    bus.addTransport(async (payload) => sent.push(payload))
    await bus.publish(Array.from({ length: 250 }, (_, i) => `key:key_${1_000_000 + i}`))
    expect(sent).toHaveLength(3)
    for (const p of sent) expect(Buffer.byteLength(p)).toBeLessThan(8000)
  })
})
