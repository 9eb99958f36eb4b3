// #svc/mp3-worker outside the build (vitest's alias): the encoder thread's script, bundled by the same
// function as nitro.config.ts, one file per test process so that parallel files never read a half-written one.
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { bundleWorker } from '../../scripts/bundle-worker.mjs'

const file = resolve(`node_modules/.cache/svc-workers/mp3-worker-${process.pid}.mjs`)
const url = await bundleWorker('mp3-worker', file)
process.once('exit', () => rmSync(file, { force: true }))
export default url.href
