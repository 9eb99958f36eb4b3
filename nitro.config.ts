import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { defineNitroConfig } from 'nitropack/config'

// Plugin manifests are generated at build time from the folders (no list kept by hand): one import per
// file, sorted by name. Files starting with "_" are helpers, not plugins.
const manifest = (dir: string) => () => {
  const abs = resolve(dir)
  const files = existsSync(abs) ? readdirSync(abs, { recursive: true }).map(String).filter((n) => n.endsWith('.ts') && !n.split('/').pop()!.startsWith('_')).sort() : []
  return files.map((n, i) => `import p${i} from ${JSON.stringify(resolve(abs, n))}`).join('\n') + `\nexport default [${files.map((_, i) => `p${i}`).join(', ')}]`
}

// Migrations ship inside the bundle, so .output boots from any working directory (pitfall 11).
const migrations = () => {
  const dir = resolve('server/db/migrations')
  const list = readdirSync(dir).filter((n) => n.endsWith('.sql')).sort().map((name) => ({ name, sql: readFileSync(resolve(dir, name), 'utf8') }))
  return `export default ${JSON.stringify(list)}`
}

export default defineNitroConfig({
  srcDir: 'server',
  compatibilityDate: '2025-07-01',
  preset: 'node-server',
  errorHandler: '~/error',
  typescript: { strict: true },
  imports: false,
  virtual: {
    '#svc/migrations': migrations,
    '#svc/jobs': manifest('server/jobs'),
    '#svc/capabilities': manifest('capabilities'),
    '#svc/providers/chat': manifest('providers/chat'),
    '#svc/providers/voice': manifest('providers/voice'),
    '#svc/providers/telephony': manifest('providers/telephony'),
    '#svc/providers/mail': manifest('providers/mail'),
  },
  externals: { inline: [] },
})
