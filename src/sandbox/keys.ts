/** The sandbox's demo keys (fixed names, printed at start) and what each may do (spec 5.3). */
export interface DemoKey {
  name: string
  assumable: boolean
  condo: boolean
  /** Counties the key may use; undefined means all. */
  counties?: readonly string[]
  description: string
}

export const DEMO_KEYS: readonly DemoKey[] = [
  {
    name: 'sandbox-basic',
    assumable: false,
    condo: false,
    description: 'standard fields only (no add-on options)',
  },
  {
    name: 'sandbox-assumable',
    assumable: true,
    condo: false,
    description: 'with the Assumable Mortgage option',
  },
  {
    name: 'sandbox-condo',
    assumable: false,
    condo: true,
    description: 'with the FHA Condo Eligibility option',
  },
  {name: 'sandbox-full', assumable: true, condo: true, description: 'with both add-on options'},
  {
    name: 'sandbox-restricted',
    assumable: false,
    condo: false,
    counties: ['06067'],
    description: 'only county 06067; other counties answer 403',
  },
]

/** The key `--sandbox` uses on the other commands. */
export const SANDBOX_DEFAULT_KEY = 'sandbox-full'

export function demoKey(name: string | undefined): DemoKey | undefined {
  return DEMO_KEYS.find((k) => k.name === name)
}
