import {Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {connectionFlags} from '../../cli/flags.js'
import {maskKeyEnds} from '../../api/secrets.js'
import {DEFAULT_PROFILE, loadConfig} from '../../config/profiles.js'
import {sanitizeForTerminal} from '../../render/terminal.js'

/** One stored profile as `keys list` shows it: the key masked to its ends. */
interface ProfileRow {
  profile: string
  selected: boolean
  baseUrl: string | null
  key: string | null
}

export default class KeysList extends BaseCommand<typeof KeysList> {
  static override summary = 'List stored profiles with their keys masked'
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json']
  // --json as on keys check (oclif's flag; the rows are the document), beside the older --output json
  static override enableJsonFlag = true
  static override flags = {
    profile: connectionFlags.profile,
    output: Flags.option({
      char: 'o',
      options: ['table', 'json'] as const,
      description: 'Output format [default: table at a terminal, else json]',
    })(),
  }

  async run(): Promise<ProfileRow[]> {
    const {config, path, warning} = await loadConfig(this.config.configDir)
    if (warning) this.warnAlways(warning)
    const selected = this.flags.profile ?? process.env['SFL_PROFILE'] ?? DEFAULT_PROFILE
    const rows = Object.entries(config.profiles).map(([name, p]) => ({
      profile: name,
      selected: name === selected,
      baseUrl: p.baseUrl ?? null,
      key: p.apiKey ? maskKeyEnds(p.apiKey) : null,
    }))
    if (this.jsonEnabled()) return rows
    if ((this.flags.output ?? (process.stdout.isTTY ? 'table' : 'json')) === 'json') {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`)
      return rows
    }
    if (rows.length === 0) {
      process.stdout.write(`No profiles in ${path}. Add one with \`sfl keys set\`.\n`)
      return rows
    }
    const w = Math.max(7, ...rows.map((r) => r.profile.length)) + 2
    const lines = rows.map(
      (r) =>
        `${r.selected ? '*' : ' '} ${r.profile.padEnd(w)}${(r.key ?? '-').padEnd(14)}${r.baseUrl ?? '-'}`,
    )
    // the config is a file people edit by hand: no control character in it reaches the terminal raw
    process.stdout.write(
      sanitizeForTerminal(`  ${'PROFILE'.padEnd(w)}${'KEY'.padEnd(14)}BASE URL\n${lines.join('\n')}\n`),
    )
    return rows
  }
}
