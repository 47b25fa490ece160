import {describe, expect, it} from 'vitest'

import {ownerProblem} from '../../src/io/owner-rule.js'

/** The one "could another user have written this?" rule (StrictModes), for user 1000. */
describe('ownerProblem', () => {
  it.each([
    ["the user's 0700 folder", {uid: 1000, mode: 0o40700}, {}, undefined],
    ["root's 0755 folder", {uid: 0, mode: 0o40755}, {}, undefined],
    [
      "root's folder where root is not trusted (a private cache)",
      {uid: 0, mode: 0o40700},
      {rootOk: false},
      {kind: 'owner', uid: 0},
    ],
    [
      "another user's folder, whatever its mode",
      {uid: 65534, mode: 0o40700},
      {},
      {kind: 'owner', uid: 65534},
    ],
    ['group-writable', {uid: 1000, mode: 0o40775}, {}, {kind: 'writable', mode: 0o775}],
    ['world-writable', {uid: 1000, mode: 0o40777}, {}, {kind: 'writable', mode: 0o777}],
    [
      'sticky world-writable (/tmp) where sticky is fine',
      {uid: 0, mode: 0o41777},
      {stickyOk: true},
      undefined,
    ],
    [
      'sticky world-writable where it is not (the folder itself)',
      {uid: 0, mode: 0o41777},
      {},
      {kind: 'writable', mode: 0o1777},
    ],
  ] as const)('%s', (_name, st, opts, want) => {
    expect(ownerProblem(st, 1000, opts)).toEqual(want)
  })
})
