// One registry per plugin kind. Every item passes its kind's boot checks (plugin-checks.ts) and a name is
// registered once; either failure stops the boot with one line naming where the item came from (its file
// under capabilities/ or providers/, or its SVC_PLUGINS package and plugin) and the problem.
export interface Named {
  name: string
}

/**
 * A plugin the boot refuses. `origin` says where it came from; the message is the one line the boot prints
 * (no stack: the cause is the plugin, not the host).
 */
export class PluginError extends Error {
  constructor(
    readonly origin: string | undefined,
    readonly problem: string,
    kind?: string,
  ) {
    super(origin ? `[plugins] ${origin}: ${problem}` : `[registry] [${kind ?? 'plugin'}] ${problem}`)
    this.name = 'PluginError'
  }
}

export interface Registry<T extends Named> {
  kind: string
  /** Registers one item; `origin` (a file, or an SVC_PLUGINS package and plugin) is named by boot errors. */
  register(item: T, origin?: string): void
  registerAll(items: readonly T[], origins?: readonly string[]): void
  get(name: string): T | undefined
  /** Where the item named `name` came from, when it was registered with an origin. */
  originOf(name: string): string | undefined
  require(name: string): T
  list(): T[]
}

/** `check` answers the first contract problem of an item (null when it has none). */
export function createRegistry<T extends Named>(kind: string, check?: (item: T) => string | null): Registry<T> {
  const items = new Map<string, T>()
  const origins = new Map<string, string>()
  const self: Registry<T> = {
    kind,
    register(item, origin) {
      if (!item || typeof item !== 'object' || typeof item.name !== 'string' || !item.name)
        throw new PluginError(origin, `a ${kind} without a name cannot be registered`, kind)
      const problem = check?.(item)
      if (problem) throw new PluginError(origin, `${kind} "${item.name}": ${problem}`, kind)
      if (items.has(item.name)) {
        const first = origins.get(item.name)
        throw new PluginError(
          origin,
          origin && first
            ? `${kind} "${item.name}" is already defined by ${first}`
            : `duplicate ${kind} name "${item.name}": each name must be registered once`,
          kind,
        )
      }
      items.set(item.name, item)
      if (origin) origins.set(item.name, origin)
    },
    registerAll(list, from) {
      for (const [i, item] of list.entries()) self.register(item, from?.[i])
    },
    get: (name) => items.get(name),
    originOf: (name) => origins.get(name),
    require(name) {
      const item = items.get(name)
      if (!item)
        throw new Error(
          `[registry] [${kind}] no ${kind} named "${name}" (known: ${[...items.keys()].join(', ') || 'none'})`,
        )
      return item
    },
    list: () => [...items.values()],
  }
  return self
}
