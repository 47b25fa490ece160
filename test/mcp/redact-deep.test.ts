import {describe, expect, it} from 'vitest'

import {redactDeep} from '../../src/mcp/tool.js'

describe('redactDeep (every message sfl mcp sends)', () => {
  it("keeps a member named as Object.prototype's own as a member, at any depth", () => {
    const value = JSON.parse('{"data":[{"__proto__":"P","constructor":{"__proto__":{"a":1}}}]}') as unknown
    expect(JSON.stringify(redactDeep(value))).toBe(
      '{"data":[{"__proto__":"P","constructor":{"__proto__":{"a":1}}}]}',
    )
  })
})
