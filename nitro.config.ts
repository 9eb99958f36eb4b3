import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { defineNitroConfig } from 'nitropack/config'
import type { Plugin } from 'rollup'
import { WORKERS, bundleWorker } from './scripts/bundle-worker.mjs'
import { pgliteSnapshotChunk } from './scripts/pglite-snapshot.mjs'
import { pluginFiles } from './scripts/plugin-files.mjs'

// Plugin manifests are generated at build time from the folders (no list kept by hand): one import per
// file, found by scripts/plugin-files.mjs (which the contract test uses too).
const manifest = (dir: string) => () => {
  const abs = resolve(dir)
  const files = pluginFiles(dir)
  // `files` names each plugin's source (capabilities/order.ts) for the boot's one-line errors.
  return (
    files.map((n, i) => `import p${i} from ${JSON.stringify(resolve(abs, n))}`).join('\n') +
    `\nexport default [${files.map((_, i) => `p${i}`).join(', ')}]` +
    `\nexport const files = ${JSON.stringify(files.map((n) => `${dir}/${n}`))}`
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

// Upload extraction, regex matching and MP3 encoding run in worker threads, whose scripts must exist as files
// in .output. Rollup would share modules between a worker and the server and put them in the nitro chunk, whose
// import boots the whole app; so esbuild bundles each worker on its own (scripts/bundle-worker.mjs: our code
// inlined, packages left as imports) and it is emitted as chunks/<name>.mjs. The same file, kept in .nitro,
// is traced for the packages it imports (pdf.js and mammoth; re2js for the regex worker; lamejs, which only
// the MP3 worker imports).
// #svc/<name> is its URL (import.meta.ROLLUP_FILE_URL_*), so .output boots from any working directory.
const workerBundle = (name: string) => resolve(`.nitro/svc/${name}.mjs`)
const workerChunks = (): Plugin => ({
  name: 'svc-workers',
  resolveId: (id) => (id.startsWith('#svc/') && id.slice(5) in WORKERS ? `\0svc-worker:${id.slice(5)}` : null),
  async load(id) {
    if (!id.startsWith('\0svc-worker:')) return null
    const name = id.slice('\0svc-worker:'.length) as keyof typeof WORKERS
    await bundleWorker(name, workerBundle(name))
    this.addWatchFile(WORKERS[name])
    const ref = this.emitFile({
      type: 'asset',
      fileName: `chunks/${name}.mjs`,
      source: readFileSync(workerBundle(name), 'utf8'),
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
  typescript: {
    strict: true,
    // The kit's own files import each other with .ts extensions (its build rewrites them to .js).
    tsConfig: {
      compilerOptions: {
        allowImportingTsExtensions: true,
        paths: {
          '@svc/plugin-kit': [resolve('packages/kit/src/index.ts')],
          '@svc/plugin-kit/testing': [resolve('packages/kit/src/testing/index.ts')],
        },
      },
    },
  },
  imports: false,
  // The public plugin kit is compiled from its source (packages/kit), so the host and the packed kit share
  // one definition without an install step (decisions "Plugin packages (issue 35)").
  alias: { '@svc/plugin-kit': resolve('packages/kit/src/index.ts') },
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
    '#svc/providers/blob': manifest('providers/blob'),
    '#svc/widget-script': widgetScript,
  },
  // Origin-root pages that are not API routes (outside server/routes, so not in the OpenAPI document):
  // the widget script and the development-only demo page (docs/decisions "Widget script and demo page").
  handlers: [
    { route: '/widget.js', method: 'get', handler: resolve('server/site/widget-js.ts'), lazy: true },
    { route: '/widget.js', method: 'head', handler: resolve('server/site/widget-js.ts'), lazy: true },
    { route: '/widget-demo', method: 'get', handler: resolve('server/site/widget-demo.ts'), lazy: true },
  ],
  externals: { inline: [], traceInclude: Object.keys(WORKERS).map(workerBundle) },
  // A fresh PGlite cluster, loaded by a first boot instead of running initdb (scripts/pglite-snapshot.mjs).
  rollupConfig: { plugins: [workerChunks(), pgliteSnapshotChunk()] },
})
