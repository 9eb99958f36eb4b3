#!/usr/bin/env node
// Builds the embeddable widget (widget/src/widget.ts) into one minified IIFE with esbuild, the bundler
// Nitro already ships. nitro.config.ts calls buildWidget() for the #svc/widget-script virtual module, so
// `nitropack build` (npm start, npm test) always serves the current script; run this file directly
// (`npm run build:widget`) to check the size or to write the file: `node scripts/build-widget.mjs out.js`.
// The budget is 30 KB gzipped (issue 17); the build fails above it.
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { gzipSync } from 'node:zlib'

export const WIDGET_ENTRY = resolve(import.meta.dirname, '../widget/src/widget.ts')
export const GZIP_BUDGET = 30 * 1024

/** @returns {Promise<{ code: string, bytes: number, gzipBytes: number, hash: string }>} */
export async function buildWidget({ log = true } = {}) {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [WIDGET_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  })
  const code = result.outputFiles[0].text
  const bytes = Buffer.byteLength(code)
  const gzipBytes = gzipSync(code, { level: 9 }).length
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 12)
  if (log) console.log(`widget.js: ${bytes} B, ${gzipBytes} B gzipped (budget ${GZIP_BUDGET} B), version ${hash}`)
  if (gzipBytes > GZIP_BUDGET) throw new Error(`widget.js is ${gzipBytes} B gzipped, over the ${GZIP_BUDGET} B budget`)
  return { code, bytes, gzipBytes, hash }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    const w = await buildWidget()
    if (process.argv[2]) writeFileSync(process.argv[2], w.code)
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    process.exit(1)
  }
}
