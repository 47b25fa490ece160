import * as z from 'zod'

import {addressZip} from '../../address/standardise.js'
import {UsageError} from '../../errors.js'
import {
  ADDRESS_MAX,
  APN_MAX,
  parseMarketRate,
  PROPERTY_ID_MAX_DIGITS,
  validateLookup,
} from '../../api/validate.js'
import {clientOn} from '../../lib/client.js'
import {answerText} from '../../render/answer.js'
import {countyOf} from '../inputs.js'
import {serviceCore, type ToolDef} from '../tool.js'

/** The tool's names for the lookup fields, in the CLI's messages (src/api/validate.ts validateLookup). */
const NAMES = {fips: 'county', address: 'address', apn: 'apn', propertyId: 'property_id'}

/**
 * The JSON Schema an assistant reads carries the spec's limits (`meta`: pattern, maxLength); the rules are
 * checked by the CLI's validation in `run`, so a refusal is the CLI's sentence rather than a schema
 * library's (a 4-digit code gets "did you mean 06067 (Sacramento County, CA, its leading zero restored)?").
 */
const input = z.strictObject({
  county: z.string().optional().meta({
    description:
      'The county: its 5-digit FIPS code ("06067") or its name with the state ("Sacramento, CA"). The service answers per county; leave it out only when the address ends in a ZIP code (the county is then found from the ZIP, and the answer says which)',
  }),
  address: z.string().optional().meta({
    description:
      'Full street address, e.g. "3526 High St, Sacramento, CA 95838" (sent in its USPS Publication 28 form; on no match, as typed, then without the unit)',
    maxLength: ADDRESS_MAX,
  }),
  apn: z.string().optional().meta({description: "Assessor's parcel number", maxLength: APN_MAX}),
  property_id: z
    .union([z.string(), z.number()])
    .optional()
    .meta({
      description: `The service's own property ID, a positive whole number of at most ${PROPERTY_ID_MAX_DIGITS} digits`,
    }),
  market_rate: z.union([z.number(), z.string()]).optional().meta({
    description:
      'Percent rate of a new loan today (6.5 or "6.5%"): the Assumable verdict prices the property\'s assumable loan against it',
  }),
})

const verdict = z.object({
  program: z.string(),
  outcome: z.enum(['eligible', 'not eligible', 'caution', 'unknown']),
  codes: z.array(z.string()),
  text: z.string(),
})

const output = z.object({
  county: z.object({fips: z.string(), name: z.string()}),
  record: z.record(z.string(), z.unknown()).meta({description: 'The record as the service sent it (spec 2)'}),
  match: z.object({
    status: z.string().meta({description: 'matched, or matched_without_unit (not the unit asked for)'}),
    tried: z
      .array(z.record(z.string(), z.string()))
      .meta({description: 'Every form of the input sent, in order'}),
  }),
  verdicts: z
    .array(verdict)
    .meta({description: "One per program: the service's flag, explained by the record"}),
  otherRecords: z
    .number()
    .meta({description: 'Further records the service answered with (the first is shown)'}),
  problems: z
    .array(z.string())
    .meta({description: "The record's departures from the spec's rules (empty when it conforms)"}),
})

export const lookupTool: ToolDef<typeof input> = {
  name: 'lookup_property',
  title: 'Look up a property',
  description: `Special-financing eligibility of ONE residential property from the Special Financing Lookup Service: FHA, FHA condo, USDA rural area, VA, assumable loan and CRA tract level, each as the service's verdict with its reason, plus the valuation and the record as sent.
Give the county (code or "Name, ST"; find_counties finds a code) and exactly one of address, apn or property_id; an address that ends in a ZIP code needs no county (a ZIP that spans counties is tried in order of its share of homes). One request, at most 3 for an address (as standardised, as typed, without the unit; a match without the unit is said). Spends the API key's rate-limit budget; a rate-limit wait longer than 10 s is not made: the tool says when the budget returns instead.
The record's text is the service's data: in the text answer its values are quoted with control characters escaped; structuredContent has them as sent. It will not search by owner, list a county's properties (see plan_export), or take an API key or service URL: those come from sfl's own configuration. It always asks the service: it reads no export on disk (the person's \`sfl lookup --from DIR\` answers from an --out-dir export with no request).`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: true},
  needsService: true,
  async run(args, deps, call) {
    // no county: the library finds it from the address's ZIP (src/lookup/zip-lookup.ts), or says one is needed
    const county = args.county === undefined ? undefined : countyOf(args.county, 'county')
    const propertyId = args.property_id === undefined ? undefined : String(args.property_id)
    // the CLI's checks, before anything is sent: exactly one of the three, each within the spec's sizes
    // (any county's code stands in while the ZIP's is unknown; the library checks the ZIP is there)
    const query = validateLookup(
      {fips: county?.fips ?? '01001', address: args.address, apn: args.apn, propertyId},
      NAMES,
    )
    const marketRate =
      args.market_rate === undefined ? undefined : parseMarketRate(String(args.market_rate), 'market_rate')
    // through the library, on the server's one core; the call's signal ends its request, waits and retries
    const client = clientOn(serviceCore(deps))
    const by = query.by
    if (!county && (by.kind !== 'address' || addressZip(by.value) === undefined))
      throw new UsageError(
        'county is required: a 5-digit code such as 06067 or a name such as "Sacramento, CA" (find_counties finds one), unless the address ends in a ZIP code',
      )
    const at = county ? {fips: county.fips} : {}
    const found = await client.lookup(
      by.kind === 'address'
        ? {...at, address: by.value}
        : by.kind === 'apn'
          ? {...at, apn: by.value}
          : {...at, propertyId: by.value},
      {signal: call.signal},
    )
    const used = county ?? found.match.county
    const verdicts = client.explain(found.record, marketRate === undefined ? {} : {marketRate})
    return {
      text: answerText(found.record, verdicts, found.match),
      structured: {
        county: {fips: used?.fips ?? found.record.Fips, name: used?.label ?? found.record.Fips},
        record: found.record,
        match: found.match,
        verdicts,
        otherRecords: found.records.length - 1,
        problems: found.problems[0] ?? [],
      },
    }
  },
}
