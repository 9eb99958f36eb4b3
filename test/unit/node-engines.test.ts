// The README's Node promise against the lockfile: the versions it names are package.json's `engines`, and the
// packages that declare a newer Node than our minimum (npm ci's EBADENGINE warnings on Node 20) are exactly
// the ones it lists as harmless. A new dependency that wants Node 22 fails here until the README says why it
// is fine, or the minimum moves.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'
import { verifies } from '../requirements'

const ROOT = resolve(import.meta.dirname, '../..')
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8')

describe('the Node version the README promises', () => {
  it('is the engines range, and names every package that asks for more', () => {
    verifies('docs.node-version')
    const pkg = JSON.parse(read('package.json'))
    const readme = read('README.md')
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0')
    expect(readme).toContain('Node 20.19+ (or 22.12+) is all you need')
    const minimum = semver.minVersion(pkg.engines.node)!.version
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>
    }
    const wanting = new Set<string>()
    for (const [path, entry] of Object.entries(lock.packages)) {
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node
      if (!path || !node || semver.satisfies(minimum, node)) continue
      wanting.add(`${path.replace(/^.*node_modules\//, '')} ${semver.major(entry.version!)}`)
    }
    expect([...wanting].sort()).toEqual([
      '@modelcontextprotocol/inspector 2',
      'commander 15',
      'nanoid 6',
      'rollup-plugin-visualizer 7',
      'undici 8',
    ])
    for (const name of wanting) {
      const [pkgName, major] = name.split(' ')
      expect(readme, name).toMatch(new RegExp(`\`${pkgName.replace('/', '\\/')}\` ${major}\\b`))
    }
  })
})
