// Builds .output once, starts one shared server (embedded PGlite, or PostgreSQL when DATABASE_URL is
// set), and prints the requirements coverage when the run ends.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import type { TestProject } from 'vitest/node'
import { browserMissing, browserRequired } from '../helpers/browser'
import { preparePgliteTemplate, startServer, type TestServer } from '../helpers/server'
import { executedCitations } from '../citations'
import { requirements, type Requirement } from '../requirements'
import { coverageReport } from '../requirements-coverage'

declare module 'vitest' {
  export interface ProvidedContext {
    base: string
    origin: string
    masterKey: string
    engine: string
  }
}

let server: TestServer | undefined

export async function setup(project: TestProject) {
  if (!process.env.SVC_TEST_SKIP_BUILD) {
    const r = spawnSync(process.execPath, [resolve('node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
      stdio: 'inherit',
    })
    if (r.status !== 0) throw new Error('nitropack build failed')
  }
  // Every test server on an embedded database starts from one migrated copy (helpers/server.ts).
  await preparePgliteTemplate()
  // One master key drives every file's requests: lift the per-credential write and read limits so the
  // suite tests validation, not the limiter (which has its own tests).
  // 127.0.0.1 is exempt from the private-host check so tests can build agents from sites they serve
  // themselves; every other private address (and localhost by name) stays refused.
  server = await startServer({
    env: {
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000',
      SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      SVC_QUEUE_SCHEMA: 'pgboss',
    },
  })
  project.provide('base', server.base)
  project.provide('origin', server.origin)
  project.provide('masterKey', server.masterKey)
  project.provide('engine', process.env.DATABASE_URL ? 'postgres' : 'pglite')
  return async () => {
    await server?.stop()
    console.log('\n' + coverageReport())
    // Under `npm test` (the whole suite), every rule must have been cited by a test that ran on this
    // engine: a citation in a skipped or other-engine-only test does not count (test/citations.ts).
    if (process.env.SVC_COVERAGE_GATE) {
      const ran = executedCitations()
      const here = process.env.DATABASE_URL ? 'postgres' : 'pglite'
      // Rules proven in a real browser are excused where no Chromium is installed (the browser tests say
      // they were skipped), but not under SVC_REQUIRE_BROWSER=1 (CI).
      const noBrowser = !!browserMissing() && !browserRequired()
      const rules = (Object.entries(requirements) as [string, Requirement][]).filter(
        ([, r]) => !(noBrowser && r.browser),
      )
      const missing = rules.filter(([id, r]) => (r.engines ?? [here]).includes(here) && !ran.has(id)).map(([id]) => id)
      const engine = here === 'postgres' ? 'PostgreSQL' : 'PGlite'
      if (missing.length) {
        // A throw here is only logged by vitest ("error during close"); the exit code carries the verdict.
        console.error(`\nRequirements not proven by a test that ran on ${engine}: ${missing.join(', ')}`)
        process.exitCode = 1
      } else
        console.log(
          `Every rule was proven by a test that ran on ${engine}${noBrowser ? ' (the real-browser rules excused: no Chromium)' : ''}.`,
        )
    }
  }
}
