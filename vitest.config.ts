import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// Two projects. `unit`: pure logic (test/unit, test/plugins), no build, no server, no database:
// `npm run test:unit` runs in seconds. `http`: the built server over real HTTP and real databases; its
// global setup builds .output once, starts the shared server and, under `npm test`, checks at the end
// that every requirement was cited by a test that ran (see test/requirements-coverage.ts).
const alias = { '~': fileURLToPath(new URL('./server', import.meta.url)) }
const UNIT = ['test/unit/**/*.test.ts', 'test/plugins/**/*.test.ts']

export default defineConfig({
  resolve: { alias },
  test: {
    // Files share one server (one tenant per file); PGlite-heavy files starting their own servers run
    // alongside, so keep the worker count to the machine's two cores.
    maxWorkers: 2,
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
