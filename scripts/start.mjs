#!/usr/bin/env node
// `npm start`: build when the sources are newer than .output, then serve on HOST (default 127.0.0.1,
// not every interface: pitfall 9) and PORT (default 3000).
import { spawnSync, spawn } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const entry = join(root, '.output/server/index.mjs')
const SOURCES = [
  'server',
  'capabilities',
  'providers',
  'widget',
  'scripts/build-widget.mjs',
  'nitro.config.ts',
  'package-lock.json',
]

function newest(path) {
  if (!existsSync(path)) return 0
  const st = statSync(path)
  if (!st.isDirectory()) return st.mtimeMs
  return Math.max(st.mtimeMs, ...readdirSync(path).map((n) => newest(join(path, n))))
}

if (!existsSync(entry) || SOURCES.some((s) => newest(join(root, s)) > statSync(entry).mtimeMs)) {
  console.log('[start] building…')
  const r = spawnSync(process.execPath, [join(root, 'node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
    cwd: root,
    stdio: 'inherit',
  })
  if (r.status !== 0) process.exit(r.status ?? 1)
}

const child = spawn(process.execPath, [entry], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, HOST: process.env.HOST ?? '127.0.0.1', PORT: process.env.PORT ?? '3000' },
})
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
