// Cache invalidation between instances. `publish` drops the tagged entries in this process at once, so the
// instance that makes a change answers only after its own caches forgot the old state. The other instances
// hear of it from PostgreSQL: row triggers (migration 0010) NOTIFY on INVALIDATE_CHANNEL for every change
// of a key, user, account, subscription or OAuth revocation, whoever wrote it, and every instance LISTENs.
// A new cache of other rows needs its trigger there. With REDIS_URL, publishes also go over Redis pub/sub
// (for a deployment whose pooler cannot LISTEN). Tags: key:<key_id>, user:<usr>, acc:<acc>, grant:<id>, client:<id>,
// tok:<token sha256>; `*` drops everything.
import { randomUUID } from 'node:crypto'
import { TaggedCache, type TaggedCacheOptions } from '~/lib/tagged-cache'

export const INVALIDATE_CHANNEL = 'svc_invalidate'
/** NOTIFY payloads must stay under 8000 bytes: tags go out in chunks. */
const TAGS_PER_MESSAGE = 100

export type Tags = readonly string[]

export interface InvalidationBus {
  readonly instanceId: string
  /** Drops `tags` here now, then sends them to the other instances (a failed send is logged, not thrown). */
  publish(tags: Tags): Promise<void>
  subscribe(fn: (tags: Tags) => void): () => void
  /** A message from a transport: `{"i": sender, "t": [tags]}`; this instance's own messages are skipped. */
  receive(payload: string): void
  addTransport(send: (payload: string) => Promise<unknown>): void
}

export function createInvalidationBus(log: (m: string) => void = console.error): InvalidationBus {
  const instanceId = randomUUID()
  const listeners = new Set<(tags: Tags) => void>()
  const transports: ((payload: string) => Promise<unknown>)[] = []
  const deliver = (tags: Tags) => {
    for (const fn of listeners) {
      try {
        fn(tags)
      } catch (err) {
        log(`[bus] listener failed: ${(err as Error).message}`)
      }
    }
  }
  return {
    instanceId,
    async publish(tags) {
      if (!tags.length) return
      deliver(tags)
      for (let i = 0; i < tags.length; i += TAGS_PER_MESSAGE) {
        const payload = JSON.stringify({ i: instanceId, t: tags.slice(i, i + TAGS_PER_MESSAGE) })
        for (const send of transports)
          await send(payload).catch((err: Error) => log(`[bus] could not send an invalidation: ${err.message}`))
      }
    },
    subscribe(fn) {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },
    receive(payload) {
      let m: { i?: unknown; t?: unknown }
      try {
        m = JSON.parse(payload)
      } catch {
        return
      }
      if (m.i === instanceId || !Array.isArray(m.t)) return
      deliver(m.t.filter((t): t is string => typeof t === 'string'))
    },
    addTransport(send) {
      transports.push(send)
    },
  }
}

/**
 * One TaggedCache per database, created on first use and emptied by that database's bus: call once at
 * module level, then `cacheOf(database)` wherever the cache is read.
 */
export function cachePerDatabase<V>(opts: TaggedCacheOptions): (database: { bus: InvalidationBus }) => TaggedCache<V> {
  const caches = new WeakMap<object, TaggedCache<V>>()
  return (database) => {
    let cache = caches.get(database)
    if (!cache) {
      const created = new TaggedCache<V>(opts)
      database.bus.subscribe((tags) => created.invalidate(tags))
      caches.set(database, created)
      cache = created
    }
    return cache
  }
}
