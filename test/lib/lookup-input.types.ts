/**
 * A type test, checked by tsc in the suite (`npm run typecheck`, part of `npm test`; tsconfig.json
 * includes test/): a lookup takes exactly one of address, apn and propertyId (spec 4: one identifier per
 * request). Each `@ts-expect-error` line must fail to compile; if one compiled, tsc would report the
 * directive as unused and the type-check would fail. Nothing here runs.
 */
import type {LookupInput, SflClient} from '../../src/lib/index.js'

export function lookups(sfl: SflClient): void {
  void sfl.lookup({fips: '06067', address: '3526 High St, Sacramento, CA 95838'})
  void sfl.lookup({county: 'Sacramento, CA', apn: '078-0123-045', asTyped: true})
  void sfl.lookup({fips: '06067', propertyId: 30000000006}, {signal: new AbortController().signal})

  // @ts-expect-error two identifiers: the service takes one per request
  void sfl.lookup({fips: '06067', apn: '078-0123-045', address: '3526 High St'})
  // @ts-expect-error two identifiers
  void sfl.lookup({fips: '06067', apn: '078-0123-045', propertyId: '30000000006'})
  // @ts-expect-error three identifiers
  void sfl.lookup({fips: '06067', address: 'x', apn: 'y', propertyId: 1})
  // @ts-expect-error no identifier
  void sfl.lookup({fips: '06067'})

  // @ts-expect-error an identifier that is undefined is no identifier (exactOptionalPropertyTypes)
  const unset: LookupInput = {fips: '06067', apn: '1', address: undefined}
  void unset
}
