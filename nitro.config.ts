import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { defineNitroConfig } from 'nitropack/config'
import type { Plugin } from 'rollup'

// Plugin manifests are generated at build time from the folders (no list kept by hand): one import per
// file, sorted by name. Files starting with "_" are helpers, not plugins.
const manifest = (dir: string) => () => {
  const abs = resolve(dir)
  const files = existsSync(abs)
    ? readdirSync(abs, { recursive: true })
        .map(String)
        .filter((n) => n.endsWith('.ts') && !n.split('/').pop()!.startsWith('_'))
        .sort()
    : []
  return (
    files.map((n, i) => `import p${i} from ${JSON.stringify(resolve(abs, n))}`).join('\n') +
    `\nexport default [${files.map((_, i) => `p${i}`).join(', ')}]`
  )
}

// Migrations ship inside the bundle, so .output boots from any working directory (pitfall 11).
const migrations = () => {
  const dir = resolve('server/db/migrations')
  const list = readdirSync(dir)
    .filter((n) => n.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, sql: readFileSync(resolve(dir, name), 'utf8') }))
  return `export default ${JSON.stringify(list)}`
}

// Upload extraction runs in a worker thread, whose script must exist as a file in .output. Rollup would
// share modules between the worker and the server and put them in the nitro chunk, whose import boots the
// whole app; so esbuild bundles the worker on its own (our code inlined, packages left as imports) and it
// is emitted as chunks/extract-worker.mjs. The same file, kept in .nitro, is traced for the packages it
// imports. #svc/extract-worker is its URL (import.meta.ROLLUP_FILE_URL_*), so .output boots
// from any working directory.
const WORKER_BUNDLE = resolve('.nitro/svc/extract-worker.mjs')
const extractWorker = (): Plugin => ({
  name: 'svc-extract-worker',
  resolveId: (id) => (id === '#svc/extract-worker' ? '\0svc-extract-worker' : null),
  async load(id) {
    if (id !== '\0svc-extract-worker') return null
    const entry = resolve('server/domain/kb/document-extract-worker.ts')
    const { build } = await import('esbuild')
    await build({
      entryPoints: [entry],
      outfile: WORKER_BUNDLE,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      alias: { '~': resolve('server') },
      logLevel: 'silent',
    })
    this.addWatchFile(entry)
    const ref = this.emitFile({
      type: 'asset',
      fileName: 'chunks/extract-worker.mjs',
      source: readFileSync(WORKER_BUNDLE, 'utf8'),
    })
    return `export default import.meta.ROLLUP_FILE_URL_${ref}`
  },
  // Relative to the importing chunk's own URL. Nitro rewrites `import.meta.` in every chunk to a stand-in
  // (globalThis._importMeta_) that is still a placeholder when the nitro chunk is evaluated; its pattern
  // does not match `import.meta?.`, which is the real module URL.
  resolveFileUrl: ({ relativePath }) => `new URL(${JSON.stringify(relativePath)}, import.meta?.url).href`,
})

// The embeddable widget script (widget/src) is bundled by esbuild at every build: the virtual module holds
// the minified code, its sizes and version hash; the build prints the gzipped size and fails over 30 KB.
const widgetScript = async () => {
  const { buildWidget } = await import('./scripts/build-widget.mjs')
  return `export default ${JSON.stringify(await buildWidget())}`
}

export default defineNitroConfig({
  srcDir: 'server',
  compatibilityDate: '2025-07-01',
  preset: 'node-server',
  errorHandler: '~/error',
  typescript: { strict: true },
  imports: false,
  // Twilio Media Streams and browser voice chat use Nitro's own WebSockets (crossws), not a second server.
  experimental: { websocket: true },
  virtual: {
    '#svc/migrations': migrations,
    '#svc/jobs': manifest('server/jobs'),
    '#svc/capabilities': manifest('capabilities'),
    '#svc/providers/chat': manifest('providers/chat'),
    '#svc/providers/voice': manifest('providers/voice'),
    '#svc/providers/telephony': manifest('providers/telephony'),
    '#svc/providers/speech': manifest('providers/speech'),
    '#svc/providers/mail': manifest('providers/mail'),
    '#svc/widget-script': widgetScript,
  },
  // Origin-root pages that are not API routes (outside server/routes, so not in the OpenAPI document):
  // the widget script and the development-only demo page (docs/decisions "Widget script and demo page").
  handlers: [
    { route: '/widget.js', method: 'get', handler: resolve('server/site/widget-js.ts'), lazy: true },
    { route: '/widget.js', method: 'head', handler: resolve('server/site/widget-js.ts'), lazy: true },
    { route: '/widget-demo', method: 'get', handler: resolve('server/site/widget-demo.ts'), lazy: true },
  ],
  externals: { inline: [], traceInclude: [WORKER_BUNDLE] },
  rollupConfig: { plugins: [extractWorker()] },
})
