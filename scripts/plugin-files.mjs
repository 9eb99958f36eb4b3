// The plugin files of a folder as the build finds them (nitro.config.ts manifests) and as the contract test
// checks them (test/contract/plugins.test.ts): one list, so a file the server loads is a file the suite
// checks. Every .ts file at any depth (capabilities/acme/book.ts too), sorted, except those whose file name
// starts with "_" (helpers, not plugins).
import { existsSync, readdirSync } from 'node:fs'
import { resolve } from 'node:path'

/** Paths relative to `dir` (with "/"), or none when the folder does not exist. */
export function pluginFiles(dir) {
  const abs = resolve(dir)
  if (!existsSync(abs)) return []
  return readdirSync(abs, { recursive: true })
    .map((n) => String(n).split('\\').join('/'))
    .filter((n) => n.endsWith('.ts') && !n.endsWith('.d.ts') && !n.split('/').pop().startsWith('_'))
    .sort()
}
