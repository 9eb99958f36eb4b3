// Reads which requirement ids the test files cite (statically, so it works across vitest workers).
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { requirements } from './requirements'

const TEST_DIR = resolve(import.meta.dirname)

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  )
}

export function citedIds(): Map<string, string[]> {
  const cited = new Map<string, string[]>()
  for (const file of testFiles(TEST_DIR)) {
    const src = readFileSync(file, 'utf8')
    for (const call of src.matchAll(/verifies\(([^)]*)\)/g)) {
      for (const id of call[1].matchAll(/'([^']+)'/g))
        cited.set(id[1], [...(cited.get(id[1]) ?? []), file.slice(TEST_DIR.length + 1)])
    }
  }
  return cited
}

export function coverageReport(): string {
  const cited = citedIds()
  const ids = Object.keys(requirements)
  const proven = ids.filter((id) => cited.has(id))
  const missing = ids.filter((id) => !cited.has(id))
  return [
    `Requirements coverage: ${proven.length}/${ids.length} contract rules cited by a test (${Math.round((100 * proven.length) / ids.length)}%).`,
    missing.length ? `Not yet proven: ${missing.join(', ')}` : 'Every rule is cited.',
  ].join('\n')
}
