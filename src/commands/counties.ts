import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {NotFoundError} from '../errors.js'
import {paragraphs} from '../cli/help-text.js'
import type {County} from '../address/counties.js'
import {forTerminal} from '../render/terminal.js'

/** `sfl counties --json`: the counties whose name or code matched, and near misses when none did. */
export interface CountySearch {
  matches: County[]
  didYouMean: County[]
}

export default class Counties extends BaseCommand<typeof Counties> {
  static override summary = 'Find a county code (FIPS) by name, or a name by code'
  static override description = paragraphs`Searches the table of US counties shipped with sfl (generated from FHFA's public-domain
2026 county list). SEARCH is a name or part of one ("sacramento", "Orange, FL") or the start of a FIPS code ("06").
Names that nearly match are suggested when nothing contains SEARCH. --json prints {matches, didYouMean} (also
the default in a pipe). Sends no request. Exit 3 when nothing is found (with --json: the document, its matches
empty).`

  static override examples = [
    {description: 'The code of a county', command: '<%= config.bin %> counties "Sacramento, CA"'},
    {description: 'Every county of a state', command: '<%= config.bin %> counties 06'},
  ]

  static override enableJsonFlag = true

  static override args = {
    search: Args.string({
      description: 'Name (optionally ", ST") or the start of a FIPS code',
      required: true,
    }),
  }

  static override flags = {
    output: Flags.option({
      char: 'o',
      options: ['table', 'json'] as const,
      description: 'Output format [default: table at a terminal, else json] (json: deprecated, use --json)',
    })(),
  }

  async run(): Promise<CountySearch> {
    const {args} = await this.parse(Counties)
    const {searchCounties, describeCounty} = await import('../address/counties.js')
    const {matches, didYouMean} = searchCounties(args.search)
    const notFound = () => new NotFoundError(`no county name contains "${args.search}"`, 404)
    if (this.jsonEnabled()) {
      // nothing found is still a search result: the document (matches empty, didYouMean), exit 3
      if (matches.length === 0) {
        const e = notFound()
        process.stderr.write(`Error: ${forTerminal(e.message)}\n`)
        process.exitCode = e.exitCode
      }
      return {matches, didYouMean}
    }
    if (this.flags.output === 'json')
      this.warn((await import('../cli/json-output.js')).OUTPUT_JSON_DEPRECATED)
    const format = this.flags.output ?? (process.stdout.isTTY ? 'table' : 'json')
    if (format === 'json') process.stdout.write(`${JSON.stringify({matches, didYouMean}, null, 2)}\n`)
    else
      process.stdout.write(
        matches.map((c) => `${c.fips}  ${c.name}, ${c.state}\n`).join('') ||
          (didYouMean.length
            ? `Did you mean:\n${didYouMean.map((c) => `  ${describeCounty(c)}\n`).join('')}`
            : ''),
      )
    if (matches.length === 0) throw notFound()
    return {matches, didYouMean}
  }
}
