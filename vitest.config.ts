import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // `~/` is server/, as in Nitro and tsconfig.
  resolve: { alias: { '~': fileURLToPath(new URL('./server', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    // Generous: some tests boot servers of their own (a fresh PGlite takes 6–7 s, more on a loaded machine).
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Files share one server (one tenant per file); PGlite-heavy files starting their own servers run
    // alongside, so keep the worker count to the machine's two cores.
    maxWorkers: 2,
    reporters: ['default'],
  },
})
