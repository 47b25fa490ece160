import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the built CLI and sandboxes; two cores, so keep parallelism modest
    maxWorkers: 2,
    onConsoleLog: () => undefined,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary'],
      thresholds: {lines: 70, functions: 70, statements: 70, branches: 60},
    },
  },
})
