// An in-process cache whose entries carry tags (key:…, user:…, acc:…): a change anywhere drops every entry
// that carries one of its tags. Entries also expire (a safety net, never the mechanism), the cache holds at
// most `max` entries (oldest dropped first), and a value read before an invalidation is never stored after
// it: `begin()` takes the generation, and `set()` refuses a value whose read began before the last drop.
export interface TaggedCacheOptions {
  ttlMs: number
  max: number
}

interface Entry<V> {
  value: V
  tags: readonly string[]
  expiresAt: number
}

export class TaggedCache<V> {
  private readonly entries = new Map<string, Entry<V>>()
  private readonly byTag = new Map<string, Set<string>>()
  private generation = 0

  constructor(private readonly opts: TaggedCacheOptions) {}

  get size() {
    return this.entries.size
  }

  get(key: string, now = Date.now()): V | undefined {
    const e = this.entries.get(key)
    if (!e) return undefined
    if (e.expiresAt <= now) {
      this.delete(key)
      return undefined
    }
    return e.value
  }

  /** The generation to hand to `set` once the value has been read. */
  begin(): number {
    return this.generation
  }

  /** Stores unless an invalidation ran since `begin()` answered `generation`. `expiresAt` caps the TTL. */
  set(key: string, value: V, tags: readonly string[], generation: number, expiresAt?: number, now = Date.now()) {
    if (generation !== this.generation) return false
    this.delete(key)
    if (this.entries.size >= this.opts.max) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.delete(oldest)
    }
    this.entries.set(key, { value, tags, expiresAt: Math.min(now + this.opts.ttlMs, expiresAt ?? Infinity) })
    for (const t of tags) {
      const keys = this.byTag.get(t) ?? new Set<string>()
      keys.add(key)
      this.byTag.set(t, keys)
    }
    return true
  }

  /**
   * The cached value, or `load()`'s answer stored under `tagsOf(value)` (at most until `expiresAtOf(value)`)
   * unless an invalidation ran while it loaded. A null answer is not cached.
   */
  async read(
    key: string,
    load: () => Promise<V | null>,
    tagsOf: (value: V) => readonly string[],
    expiresAtOf?: (value: V) => number | undefined,
  ): Promise<V | null> {
    const hit = this.get(key)
    if (hit !== undefined) return hit
    const generation = this.begin()
    const value = await load()
    if (value !== null) this.set(key, value, tagsOf(value), generation, expiresAtOf?.(value))
    return value
  }

  /** Drops every entry carrying one of `tags` (`*` drops all). */
  invalidate(tags: readonly string[]) {
    this.generation++
    if (tags.includes('*')) {
      this.entries.clear()
      this.byTag.clear()
      return
    }
    for (const t of tags) {
      const keys = this.byTag.get(t)
      if (!keys) continue
      for (const k of [...keys]) this.delete(k)
    }
  }

  delete(key: string) {
    const e = this.entries.get(key)
    if (!e) return
    this.entries.delete(key)
    for (const t of e.tags) {
      const keys = this.byTag.get(t)
      keys?.delete(key)
      if (keys && !keys.size) this.byTag.delete(t)
    }
  }
}
