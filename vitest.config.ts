import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

// Two projects. `unit`: pure logic (test/unit, test/plugins), no build, no server, no database:
// `npm run test:unit` runs in seconds. `http`: the built server over real HTTP and real databases; its
// global setup builds .output once, starts the shared server and, under `npm test`, checks at the end
// that every requirement was cited by a test that ran (see test/requirements-coverage.ts).
const alias = {
  '~': fileURLToPath(new URL('./server', import.meta.url)),
  // The public plugin kit, from its source (as nitro.config.ts aliases it for the build); the more specific
  // entry first, since an alias also matches the names under it.
  '@svc/plugin-kit/testing': fileURLToPath(new URL('./packages/kit/src/testing/index.ts', import.meta.url)),
  '@svc/plugin-kit': fileURLToPath(new URL('./packages/kit/src/index.ts', import.meta.url)),
  // The encoder thread's script, bundled at import (the build emits it as a chunk instead).
  '#svc/mp3-worker': fileURLToPath(new URL('./test/helpers/mp3-worker-url.ts', import.meta.url)),
}
const UNIT = ['test/unit/**/*.test.ts', 'test/plugins/**/*.test.ts']

// The files that take minutes, started first so that they do not form the tail of a run. Vitest orders by
// the durations it cached from the last run, and CI's PostgreSQL run follows the PGlite run, where these
// PostgreSQL-only files were skipped in milliseconds: they started last and the run waited for them alone.
const LONG_FIRST = [
  'test/integration/chaos.test.ts',
  'test/integration/campaign-run.test.ts',
  'test/integration/cluster.test.ts',
  'test/v1/dashboard.test.ts',
  'test/v1/fuzz.test.ts',
  'test/v1/chat-claim.test.ts',
  'test/integration/crawl-limits.test.ts',
]
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((p) => f.moduleId.endsWith(p))
      return i < 0 ? LONG_FIRST.length : i
    }
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
    // Files share one server (one tenant per file); PGlite-heavy files starting their own servers run
    // alongside, so keep the worker count to the machine's two cores.
    maxWorkers: 2,
    sequence: { sequencer: LongFirst },
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'http',
          include: ['test/**/*.test.ts'],
          exclude: UNIT,
          globalSetup: ['test/setup/global.ts'],
          // Generous: some tests boot servers of their own (a fresh PGlite takes 6–7 s, more on a loaded machine).
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
    ],
  },
})
