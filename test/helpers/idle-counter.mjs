// Preloaded into a built server (NODE_OPTIONS=--import) by test/integration/idle-wakeups.test.ts: counts what wakes
// the process. Every timer callback that runs (setTimeout and setInterval, and node:timers/promises' setTimeout,
// which pg-boss's loops sleep on), by the interval and the function that set it; and on PGlite every statement the
// engine runs (Parse and Query messages, by text). SIGUSR2 writes the counts since the last SIGUSR2 to
// SVC_IDLE_COUNT_FILE and starts again from zero.
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

const timers = new Map()
const statements = new Map()
const count = (map, key) => map.set(key, (map.get(key) ?? 0) + 1)
/** The first frame outside this file: who set the timer. */
const setter = () =>
  (new Error().stack ?? '')
    .split('\n')
    .slice(3, 4)
    .join('')
    .trim()
    .replace(/^at /, '')
    .replace(/\(?file:\/\/\S*\/(chunks|node_modules)\//, '$1/')
    .replace(/\)$/, '')

const wrap = (orig, kind) =>
  function (fn, ms, ...rest) {
    if (typeof fn !== 'function') return orig.call(this, fn, ms, ...rest)
    const key = `${kind} ${ms ?? 0} ms ${setter()}`
    return orig.call(
      this,
      function (...a) {
        count(timers, key)
        return fn.apply(this, a)
      },
      ms,
      ...rest,
    )
  }
globalThis.setTimeout = wrap(globalThis.setTimeout, 'setTimeout')
globalThis.setInterval = wrap(globalThis.setInterval, 'setInterval')
// pg-boss requires node:timers/promises at each sleep, so a patched export is the one it calls.
const promises = createRequire(import.meta.url)('node:timers/promises')
const sleep = promises.setTimeout
promises.setTimeout = function (ms, ...rest) {
  const key = `sleep ${ms ?? 0} ms ${setter()}`
  return sleep.call(this, ms, ...rest).then((v) => {
    count(timers, key)
    return v
  })
}

if (!process.env.DATABASE_URL) {
  const entry = process.argv[1]
  const { PGlite } = await import(
    pathToFileURL(join(dirname(entry), 'node_modules/@electric-sql/pglite/dist/index.js')).href
  )
  const run = PGlite.prototype.execProtocolStream
  PGlite.prototype.execProtocolStream = function (msg, ...rest) {
    // 'P' (Parse: name, then the text) or 'Q' (simple Query: the text), after the type byte and the length.
    if (msg[0] === 0x50 || msg[0] === 0x51) {
      let at = 5
      if (msg[0] === 0x50) at = msg.indexOf(0, at) + 1
      const end = msg.indexOf(0, at)
      count(
        statements,
        Buffer.from(msg.subarray(at, end < 0 ? msg.length : end))
          .toString('utf8')
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 160),
      )
    }
    return run.call(this, msg, ...rest)
  }
}

process.on('SIGUSR2', () => {
  const sorted = (map) => Object.fromEntries([...map].sort((a, b) => b[1] - a[1]))
  writeFileSync(
    process.env.SVC_IDLE_COUNT_FILE,
    JSON.stringify({ timers: sorted(timers), statements: sorted(statements) }, null, 1),
  )
  timers.clear()
  statements.clear()
})
