import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    // one temp folder for the run, removed at its end (test/global-setup.ts)
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the built CLI and sandboxes; two cores, so keep parallelism modest
    maxWorkers: 2,
    onConsoleLog: () => undefined,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // the sandbox is test equipment, not the product: it does not count toward the product's floor
      exclude: ['src/sandbox/**'],
      // the whole, and each file that is not fully covered (issue 30: per-file coverage reported)
      reporter: ['text-summary', ['text', {skipFull: true}]],
      // the floor where the product stands, sandbox excluded (2026-11-22: 90.2% lines, 78.0% branches,
      // 87.8% statements); raise it as it grows
      thresholds: {
        lines: 91,
        functions: 90,
        statements: 89,
        branches: 80,
        // the library and the MCP server are called by untrusted programs and assistants: each has a floor
        // of its own (test/lib, test/mcp alone reached 90% and 98% of lines on 2026-11-27)
        'src/lib/**': {lines: 90, functions: 85, statements: 85, branches: 74},
        'src/mcp/**': {lines: 96, functions: 85, statements: 92, branches: 82},
      },
    },
  },
})
