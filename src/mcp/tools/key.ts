import * as z from 'zod'

import {relative} from '../../keys/check.js'
import {clientOn} from '../../lib/client.js'
import {OPTION_NAMES} from '../../api/spec.js'
import {MAX_CHECKED_COUNTIES, countyOf} from '../inputs.js'
import {serviceCore, type ToolDef} from '../tool.js'

const input = z.strictObject({
  counties: z.array(z.string()).max(MAX_CHECKED_COUNTIES).optional().meta({
    description:
      'Counties to check permission for, by code ("06067") or name ("Sacramento, CA"); one request each. Default: the profile\'s default county (or the sandbox\'s demo county)',
  }),
})

const output = z.object({
  valid: z.boolean(),
  keyFrom: z.string().meta({
    description:
      "Where sfl found the key (SFL_API_KEY, a profile, sfl mcp's own option, the sandbox); never the key",
  }),
  profile: z.string(),
  rateLimit: z.object({
    limit: z.number().nullable(),
    remaining: z.number().nullable(),
    resetAt: z.string().nullable().meta({description: 'When the window resets (ISO 8601)'}),
  }),
  windowSpent: z.boolean().meta({description: 'The window has no requests left (HTTP 429)'}),
  counties: z.record(z.string(), z.enum(['permitted', 'not permitted'])),
  options: z.record(z.string(), z.enum(['included', 'not included', 'unknown'])).meta({
    description: 'The add-on data options the key carries (spec 2.2, 2.3)',
  }),
  requestsUsed: z.number(),
})

export const keyTool: ToolDef<typeof input> = {
  name: 'check_key',
  title: 'Check the API key',
  description: `Whether the API key sfl is configured with works: valid or not, the rate limit left in this window and when it resets, permission for the given counties, and which add-on options (Assumable Mortgage, FHA Condo Eligibility) it carries. One request per county.
It never shows, takes or changes the key: it says only where sfl found it (SFL_API_KEY, a profile). To use another key, the person configures sfl (\`sfl keys set\`).`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: false, openWorldHint: true},
  needsService: true,
  async run(args, deps, call) {
    const asked = (args.counties ?? []).map((c, i) => countyOf(c, `counties[${i}]`).fips)
    const plan = await deps.planCheck(asked)
    // through the library, on the server's one core; the call's signal ends its requests, waits and retries
    const r = await clientOn(serviceCore(deps)).checkKey({fips: plan.fips}, {signal: call.signal})
    const reset = r.rateLimit.reset
    const structured = {
      valid: r.valid,
      keyFrom: deps.keyFrom,
      profile: deps.profile,
      rateLimit: {
        limit: r.rateLimit.limit,
        remaining: r.rateLimit.remaining,
        resetAt: reset === null ? null : new Date(reset * 1000).toISOString(),
      },
      windowSpent: r.windowSpent,
      counties: r.counties,
      options: r.options,
      requestsUsed: r.requestsUsed,
    }
    const lines = [`Key: ${r.valid ? 'valid' : 'INVALID or missing'} (from ${deps.keyFrom})`]
    if (r.rateLimit.remaining !== null)
      lines.push(
        `Rate limit: ${r.rateLimit.remaining} of ${r.rateLimit.limit ?? '?'} left this window${reset === null ? '' : `, resets ${new Date(reset * 1000).toISOString()} (${relative(reset, deps.now())})`}`,
      )
    if (r.windowSpent) lines.push('Spent: this window has no requests left (HTTP 429); wait for the reset')
    const counties = plan.fips.filter((f) => r.counties[f] !== undefined)
    if (counties.length) lines.push(`Counties: ${counties.map((f) => `${f} ${r.counties[f]}`).join(', ')}`)
    if (r.valid) lines.push(`Options: ${OPTION_NAMES.map((o) => `${o} ${r.options[o]}`).join(', ')}`)
    else
      lines.push(
        'The person must set a valid key: SFL_API_KEY or `sfl keys set` (keys come from the partner portal)',
      )
    lines.push(`Requests: ${r.requestsUsed} used by this check`)
    return {text: lines.join('\n'), structured}
  },
}
