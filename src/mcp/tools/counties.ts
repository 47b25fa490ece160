import * as z from 'zod'

import {describeCounty} from '../../address/counties.js'
import {findCounties} from '../../lib/index.js'
import {UsageError} from '../../errors.js'
import type {ToolDef} from '../tool.js'

/** Counties listed in one answer at most: a state has up to 254 (Texas); the whole table is 3,235. */
const MAX_LIMIT = 300

const input = z.strictObject({
  query: z.string().meta({
    description:
      'A county name or part of one, optionally with the state ("sacramento", "Yolo, CA", "Saint Louis"), or the start of a FIPS code ("06" lists California\'s)',
    minLength: 1,
    maxLength: 100,
  }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .optional()
    .meta({description: 'Counties listed at most (default 50)'}),
})

const county = z.object({fips: z.string(), state: z.string(), name: z.string()})
const output = z.object({
  matches: z
    .array(county)
    .meta({description: 'Counties whose name contains the query (or whose code starts with it)'}),
  total: z.number().meta({description: 'Every match, listed or not'}),
  didYouMean: z.array(county).meta({description: 'Near misses, when nothing contains the query'}),
})

export const countiesTool: ToolDef<typeof input> = {
  name: 'find_counties',
  title: 'Find a county',
  description: `Search the US county list sfl ships (FHFA, 3,235 counties) by name or FIPS code, to find the 5-digit code the other tools and the service need. Near misses are suggested when nothing matches.
It sends no request, spends nothing and works without sfl's configuration. It will not look up a property (see lookup_property).`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false},
  needsService: false,
  async run(args) {
    if (args.query.trim() === '')
      throw new UsageError(
        'query is empty: give a county name ("Sacramento, CA") or the start of a FIPS code',
      )
    const {matches, didYouMean} = findCounties(args.query)
    const listed = matches.slice(0, args.limit ?? 50)
    const more = matches.length - listed.length
    const text = matches.length
      ? `${listed.map(describeCounty).join('\n')}${more ? `\n(${more} more: narrow the query or raise limit)` : ''}`
      : `No county name contains ${JSON.stringify(args.query)}${didYouMean.length ? `; did you mean ${didYouMean.map(describeCounty).join('; ')}?` : ''}`
    return {text, structured: {matches: listed, total: matches.length, didYouMean}}
  },
}
