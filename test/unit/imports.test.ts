// The layer rule (docs/architecture.md): lib → kit/db/config → domain → jobs, plugins → http → entry points.
// A file may import its own layer or a lower one, never a higher one, and no chain of imports may
// come back to where it started. Type-only imports count: they are edges a reader has to follow too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { verifies } from '../requirements'

const ROOT = resolve(__dirname, '../..')
const LAYERS: [RegExp, number, string][] = [
  [/^server\/lib\//, 0, 'lib'],
  [/^server\/(kit\/|db\/|config\.ts)/, 1, 'kit'],
  [/^server\/domain\//, 2, 'domain'],
  [/^(capabilities|providers)\//, 3, 'plugins'],
  [/^server\/(jobs\/|runtime\.ts)/, 3, 'jobs'],
  [/^server\/http\//, 4, 'http'],
  [/^server\/(routes|middleware|plugins|site)\/|^server\/error\.ts/, 5, 'entry'],
]
const layerOf = (file: string) => LAYERS.find(([re]) => re.test(file)) ?? null

const walk = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((n) => {
    const rel = `${dir}/${n}`
    if (statSync(join(ROOT, rel)).isDirectory()) return n === 'migrations' ? [] : walk(rel)
    return rel.endsWith('.ts') && !rel.endsWith('.d.ts') ? [rel] : []
  })

const SPEC = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*'([.~][^']*)'|import\(\s*'([.~][^']*)'\s*\)/g
function importsOf(file: string): string[] {
  const out: string[] = []
  for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(SPEC)) {
    const spec = m[1] ?? m[2]
    const base = spec.startsWith('~/') ? join(ROOT, 'server', spec.slice(2)) : resolve(ROOT, dirname(file), spec)
    const hit = [`${base}.ts`, `${base}/index.ts`, base].find((p) => existsSync(p) && statSync(p).isFile())
    if (hit) out.push(relative(ROOT, hit))
  }
  return out
}

const files = ['server', 'capabilities', 'providers'].flatMap(walk)
const graph = new Map(files.map((f) => [f, importsOf(f)]))

describe('import rule', () => {
  it('every source file belongs to a layer', () => {
    expect(files.filter((f) => !layerOf(f))).toEqual([])
  })

  it('no file imports from a higher layer', () => {
    const back: string[] = []
    for (const [from, tos] of graph)
      for (const to of tos) {
        const [a, b] = [layerOf(from), layerOf(to)]
        if (a && b && b[1] > a[1]) back.push(`${from} (${a[2]}) → ${to} (${b[2]})`)
      }
    expect(back).toEqual([])
  })

  it('the domain and the layers below it never see HTTP (no h3, no nitropack)', () => {
    const http = [...graph.keys()].filter(
      (f) => (layerOf(f)?.[1] ?? 9) <= 2 && /from '(h3|nitropack[^']*)'/.test(readFileSync(join(ROOT, f), 'utf8')),
    )
    expect(http).toEqual([])
  })

  it('the public plugin kit (packages/kit) imports nothing but its own files and the packages it declares', () => {
    verifies('plugins.kit.public')
    const KIT = 'packages/kit/src'
    // valibot (a peer), re2js and @valibot/to-json-schema (the intent and schema checks the boot and the
    // contract suites share): what package.json declares, so a packed kit installs everything it imports.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages/kit/package.json'), 'utf8'))
    const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})])
    expect([...declared].sort()).toEqual(['@valibot/to-json-schema', 're2js', 'valibot'])
    const kitFiles = walk(KIT)
    expect(kitFiles).toContain(`${KIT}/index.ts`)
    const outside: string[] = []
    const ANY_SPEC = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*'([^']*)'|import\(\s*'([^']*)'\s*\)/g
    for (const f of kitFiles)
      for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(ANY_SPEC)) {
        const spec = m[1] ?? m[2]
        const inKit = spec.startsWith('.') && resolve(ROOT, dirname(f), spec).startsWith(join(ROOT, KIT))
        if (!inKit && !declared.has(spec)) outside.push(`${f} → ${spec}`)
      }
    expect(outside).toEqual([])
  })

  it('the host takes the plugin contract from the kit: server/kit re-exports it, defining no second copy', () => {
    verifies('plugins.kit.public')
    for (const [file, define] of [
      ['capability', 'defineCapability'],
      ['chat-engine', 'defineChatEngine'],
      ['speech', 'defineSpeechProvider'],
      ['telephony', 'defineTelephony'],
      ['voice', 'defineVoiceProvider'],
      ['mailer', 'defineMailer'],
    ]) {
      const text = readFileSync(join(ROOT, `server/kit/${file}.ts`), 'utf8')
      expect(text, file).toMatch(/from '@svc\/plugin-kit'/)
      expect(text, file).not.toMatch(new RegExp(`export (const ${define} = |function ${define}\\()`))
      expect(text, file).not.toMatch(
        /export interface (Capability|ChatEngine|SpeechProvider|TelephonyProvider|VoiceProvider)\b/,
      )
    }
  })

  it('no import cycle', () => {
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return
      if (state.get(f) === 'open') return void cycles.push([...path.slice(path.indexOf(f)), f].join(' → '))
      state.set(f, 'open')
      for (const to of graph.get(f) ?? []) visit(to, [...path, f])
      state.set(f, 'done')
    }
    for (const f of files) visit(f, [])
    expect(cycles).toEqual([])
  })
})
