import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
export default defineConfig({
  resolve: { alias: { '~': '/work/main/server' } },
  test: { include: ['test/unit/**/*.test.ts'] },
})
