// Worker threads run a script file, so each worker of the server is bundled on its own by esbuild (the
// bundler Nitro already ships): our code inlined, packages left as imports, so they resolve from the
// node_modules beside the file (the project's, or .output/server/node_modules once Nitro has traced the
// bundle). nitro.config.ts emits the bundles into .output (#svc/<name>); the tests and the bench bundle the
// same entries themselves (bundleWorker) to run a worker without a build.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = resolve(import.meta.dirname, '..')

/** The workers: the virtual module #svc/<name> is the URL of chunks/<name>.mjs in the build. */
export const WORKERS = {
  'extract-worker': resolve(root, 'server/domain/kb/document-extract-worker.ts'),
  'regex-worker': resolve(root, 'server/domain/agent-tests/regex-worker.ts'),
  'mp3-worker': resolve(root, 'server/domain/calls/mp3-worker.ts'),
}

/**
 * Bundles the worker `name` into `outfile` (default: under node_modules/.cache, where its package imports
 * resolve) and answers the file's URL.
 */
/** esbuild's options for a server module bundled to run on Node outside the Nitro build (packages stay external). */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  alias: { '~': resolve(root, 'server') },
}

export async function bundleWorker(name, outfile = resolve(root, `node_modules/.cache/svc-workers/${name}.mjs`)) {
  const entry = WORKERS[name]
  if (!entry) throw new Error(`unknown worker ${name}`)
  const { build } = await import('esbuild')
  await build({
    entryPoints: [entry],
    outfile,
    ...NODE_BUNDLE,
    logLevel: 'silent',
  })
  return pathToFileURL(outfile)
}
