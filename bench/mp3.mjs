#!/usr/bin/env node
// `npm run bench:mp3`: MP3 encoding of recordings (decisions "Abuse and cost (issue 30)", MP3 encoding).
//
// Drives the server's own CallRecorder and Mp3Pool (server/domain/calls, bundled here by esbuild with the
// encoder thread of scripts/bundle-worker.mjs: no server build needed) the way calls do: BENCH_STREAMS
// recordings at once, each fed 20 ms caller frames with the agent talking half of the time, as fast as the
// encoder threads take them (a slice of 1 s per recording per turn of the event loop, feeding paused while
// more than BENCH_BACKLOG_MB wait, which keeps below the default cap). For each sample rate it prints the
// encoding throughput in × real time (seconds of call audio encoded per second of wall time) with 1 thread,
// the default (cores − 1) and one per core, and beside them the same work encoded on the event loop (the
// code before the pool), with the event loop's delay during each run (perf_hooks monitorEventLoopDelay:
// p50, p99, max). Figures only, no asserts.
//
// Env: BENCH_STREAMS (8), BENCH_SECONDS (audio seconds per recording, 120), BENCH_BACKLOG_MB (16).
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { Mp3Encoder } from '@breezystack/lamejs'
import { build } from 'esbuild'
import { bundleWorker, NODE_BUNDLE } from '../scripts/bundle-worker.mjs'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 8)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 120)
const BACKLOG = Number(process.env.BENCH_BACKLOG_MB ?? 16) * 1024 * 1024
const root = resolve(import.meta.dirname, '..')

// The recorder and the pool as the server has them; #svc/mp3-worker is the URL of the bundled thread script.
const workerUrl = await bundleWorker('mp3-worker')
const lib = resolve(root, 'node_modules/.cache/svc-bench/mp3-recorder.mjs')
await build({
  stdin: {
    contents:
      "export { CallRecorder } from './server/domain/calls/recording'\nexport { Mp3Pool } from './server/domain/calls/mp3-pool'",
    resolveDir: root,
    loader: 'ts',
  },
  outfile: lib,
  ...NODE_BUNDLE,
  logLevel: 'silent',
  plugins: [
    {
      name: 'mp3-worker-url',
      setup(b) {
        b.onResolve({ filter: /^#svc\/mp3-worker$/ }, () => ({ path: 'mp3-worker', namespace: 'svc' }))
        b.onLoad({ filter: /.*/, namespace: 'svc' }, () => ({
          contents: `export default ${JSON.stringify(workerUrl.href)}`,
        }))
      },
    },
  ],
})
const { CallRecorder, Mp3Pool } = await import(pathToFileURL(lib).href)

/** A second of caller speech-like signal (a tone with noise) and of agent audio, at `rate`. */
function signals(rate) {
  const caller = new Int16Array(rate).map((_, i) => Math.round(Math.sin(i / 5) * 6000 + (Math.random() - 0.5) * 2000))
  const agent = new Int16Array(rate).map((_, i) => Math.round(Math.sin(i / 9) * 5000 + (Math.random() - 0.5) * 1500))
  return { caller, agent }
}

const tick = () => new Promise((r) => setImmediate(r))

/** Feeds every recorder `SECONDS` of audio, one second per recorder per turn of the loop. */
async function feed(rate, recorders, paused) {
  const { caller, agent } = signals(rate)
  const frame = rate / 50
  for (let s = 0; s < SECONDS; s++) {
    // Waiting on a timer, not setImmediate: a busy wait would take the core the encoder threads need.
    while (paused()) await new Promise((r) => setTimeout(r, 5))
    for (const rec of recorders) {
      if (s % 2 === 0) rec.agentAudio(agent)
      for (let at = 0; at < rate; at += frame) rec.push(caller.subarray(at, at + frame), s % 2 === 0 ? frame : 0)
    }
    await tick()
  }
}

async function measure(run) {
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const started = performance.now()
  const extra = await run()
  const wallS = (performance.now() - started) / 1000
  lag.disable()
  const ms = (ns) => Math.round(ns / 1e6)
  return { wallS, p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max), ...extra }
}

/** The pool with `workers` threads: the server's way. */
async function pooled(rate, workers) {
  const pool = new Mp3Pool({ url: workerUrl, size: workers, backlogBytes: 1024 * 1024 * 1024, log: () => {} })
  try {
    return await measure(async () => {
      const recorders = Array.from({ length: STREAMS }, () => new CallRecorder(rate, pool, (m) => console.error(m)))
      await feed(rate, recorders, () => pool.backlog > BACKLOG)
      const out = await Promise.all(recorders.map((r) => r.finish()))
      return { audioS: out.reduce((s, r) => s + (r?.durationS ?? 0), 0), peakMb: pool.peakBacklog / 1024 / 1024 }
    })
  } finally {
    await pool.stop()
  }
}

/** The same work encoded on the event loop, chunk by chunk as the recorder did before the pool. */
async function onLoop(rate) {
  return measure(async () => {
    const { caller, agent } = signals(rate)
    const silent = new Int16Array(rate)
    const CHUNK = 1152 * 4
    const encoders = Array.from({ length: STREAMS }, () => new Mp3Encoder(2, rate, 24))
    for (let s = 0; s < SECONDS; s++) {
      const right = s % 2 === 0 ? agent : silent
      for (const enc of encoders)
        for (let at = 0; at < rate; at += CHUNK)
          enc.encodeBuffer(caller.subarray(at, at + CHUNK), right.subarray(at, at + CHUNK))
      await tick()
    }
    for (const enc of encoders) enc.flush()
    return { audioS: STREAMS * SECONDS, peakMb: 0 }
  })
}

const cores = availableParallelism()
const counts = [...new Set([1, Math.max(1, cores - 1), cores])]
console.log(
  `MP3 encoding: ${STREAMS} recordings × ${SECONDS} s of stereo audio, ${cores} cores (default SVC_MP3_WORKERS ${Math.max(1, cores - 1)})\n`,
)
console.log('| rate | where | audio s | wall s | × real time | loop delay p50 / p99 / max (ms) | peak backlog MB |')
console.log('|---|---|---|---|---|---|---|')
for (const rate of [8000, 16000]) {
  const rows = [['event loop (before the pool)', await onLoop(rate)]]
  for (const n of counts) rows.push([`pool, ${n} thread${n > 1 ? 's' : ''}`, await pooled(rate, n)])
  for (const [where, r] of rows)
    console.log(
      `| ${rate / 1000} kHz | ${where} | ${r.audioS} | ${r.wallS.toFixed(1)} | ${(r.audioS / r.wallS).toFixed(1)} | ` +
        `${r.p50} / ${r.p99} / ${r.max} | ${r.peakMb.toFixed(1)} |`,
    )
}
