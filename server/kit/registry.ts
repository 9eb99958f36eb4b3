// One registry per plugin kind. A duplicate name stops the boot with a message naming both the kind and the name.
export interface Named {
  name: string
}

export interface Registry<T extends Named> {
  kind: string
  register(item: T): void
  registerAll(items: readonly T[]): void
  get(name: string): T | undefined
  require(name: string): T
  list(): T[]
}

export function createRegistry<T extends Named>(kind: string): Registry<T> {
  const items = new Map<string, T>()
  const self: Registry<T> = {
    kind,
    register(item) {
      if (!item || typeof item.name !== 'string' || !item.name)
        throw new Error(`[registry] [${kind}] a ${kind} without a name cannot be registered`)
      if (items.has(item.name))
        throw new Error(`[registry] [${kind}] duplicate ${kind} name "${item.name}": each name must be registered once`)
      items.set(item.name, item)
    },
    registerAll(list) {
      for (const item of list) self.register(item)
    },
    get: (name) => items.get(name),
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
