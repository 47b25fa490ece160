import {afterEach, expect} from 'vitest'

/**
 * Warnings in tests are errors: a Node process warning (deprecation, MaxListeners, unhandled rejection
 * turned warning) or a console.warn/console.error during a test fails that test.
 */
const warnings: string[] = []
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`))
for (const level of ['warn', 'error'] as const) {
  const original = console[level]
  console[level] = (...args: unknown[]) => {
    warnings.push(`console.${level}: ${args.map(String).join(' ')}`)
    original(...args)
  }
}

afterEach(() => {
  const seen = warnings.splice(0)
  expect(seen, 'warnings were printed during this test').toEqual([])
})
