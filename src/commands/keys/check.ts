import {Flags} from '@oclif/core'

import {ServiceCommand} from '../../cli/service-command.js'
import {ExitCode, UsageError} from '../../errors.js'
import {maskKey} from '../../api/secrets.js'
import {apnProblem, propertyIdProblem} from '../../api/validate.js'
import {paragraphs} from '../../cli/help-text.js'
import type {KeyDocument} from '../../keys/check.js'
import {forTerminal} from '../../render/terminal.js'

export default class KeysCheck extends ServiceCommand<typeof KeysCheck> {
  static override summary =
    'Check that the API key works: validity, rate limit left, county permissions and add-on options'
  static override description = paragraphs`Spends as few requests as it can (it says how many): one per --fips (the first record
of the county), or one probe lookup. Without --fips it probes the profile's default county (\`sfl keys set --fips\`),
or 06067 with --sandbox; otherwise it asks for --fips. Reports where the key came from and the county probed.
--json prints the report as one JSON document (also the default in a pipe).
Exit 0 when the key is valid and every asked county is permitted, 4 otherwise, 5 when the window is spent.`

  static override examples = [
    {description: 'Before a call', command: '<%= config.bin %> keys check --fips 06067'},
    {
      description: 'In CI, as JSON',
      command: 'SFL_API_KEY=$KEY <%= config.bin %> keys check --fips 06067 --fips 48201 --json',
    },
    {
      description: 'Learn the options from a known property',
      command: '<%= config.bin %> keys check --fips 06067 --probe-property-id 30000000006',
    },
  ]

  static override enableJsonFlag = true

  static override flags = {
    fips: Flags.string({description: 'County to check permission for (repeatable)', multiple: true}),
    'probe-apn': Flags.string({
      description: 'Learn the options from this parcel (in the first --fips)',
      exclusive: ['probe-property-id', 'probe-address'],
    }),
    'probe-property-id': Flags.string({
      description: 'Learn the options from this property ID',
      exclusive: ['probe-apn', 'probe-address'],
    }),
    'probe-address': Flags.string({
      description: 'Learn the options from this address',
      exclusive: ['probe-apn', 'probe-property-id'],
    }),
    output: Flags.option({
      char: 'o',
      options: ['table', 'json'] as const,
      description: 'Output format [default: table at a terminal, else json] (json: deprecated, use --json)',
    })(),
  }

  async run(): Promise<KeyDocument> {
    const f = this.flags
    const {countyFromFlags} = await import('../../address/county-flags.js')
    for (const fips of f.fips ?? []) countyFromFlags({fips}, {countyFlag: false}) // a code no county has: exit 2, no request
    const probe = f['probe-apn'] !== undefined ? ({kind: 'apn', value: f['probe-apn']} as const)
      : f['probe-property-id'] !== undefined ? ({kind: 'property_id', value: f['probe-property-id']} as const)
      : f['probe-address'] !== undefined ? ({kind: 'address', value: f['probe-address']} as const)
      : undefined // prettier-ignore
    if (probe) {
      const problem =
        probe.kind === 'apn'
          ? apnProblem(probe.value)
          : probe.kind === 'property_id'
            ? propertyIdProblem(probe.value)
            : probe.value.trim()
              ? undefined
              : 'must not be empty'
      if (problem) throw new UsageError(`--probe-${probe.kind.replace('_', '-')} ${problem}`)
      if (!f.fips?.length)
        throw new UsageError('a --probe-* flag needs --fips (the county the probe property is in)')
    }
    const ctx = await this.context()
    const {planCheck} = await import('../../keys/plan.js')
    const plan = await planCheck({
      fips: f.fips ?? [],
      sandbox: f.sandbox,
      configDir: this.config.configDir,
      flags: {profile: f.profile, baseUrl: f['base-url'], apiKey: f['api-key']},
      keyInUse: ctx.apiKey,
    })
    const {checkKey, renderReport, reportDocument, reportOk, reportProblem} =
      await import('../../keys/check.js')
    const report = await checkKey(ctx, {profile: ctx.profile, probe, ...plan})
    if (report.windowSpent) process.exitCode = ExitCode.rateLimit
    else if (!reportOk(report)) process.exitCode = ExitCode.auth
    const format = this.jsonEnabled() ? 'json' : (f.output ?? (process.stdout.isTTY ? 'table' : 'json'))
    // a CI log reads stderr: a failed check says why in one line there too, beside the JSON on stdout
    const problem = format === 'json' ? reportProblem(report) : undefined
    if (problem !== undefined) process.stderr.write(`Error: ${forTerminal(problem)}\n`)
    const doc = reportDocument(report)
    // --json: oclif prints the returned report, and nothing else goes to stdout
    if (this.jsonEnabled()) return doc
    if (f.output === 'json') this.warn((await import('../../cli/json-output.js')).OUTPUT_JSON_DEPRECATED)
    process.stdout.write(
      format === 'json'
        ? `${JSON.stringify(doc, null, 2)}\n`
        : renderReport(report, Date.now(), maskKey(ctx.apiKey), plan.fips),
    )
    return doc
  }
}
