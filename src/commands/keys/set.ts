import {Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {connectionFlags} from '../../cli/flags.js'
import {assertSafeBaseUrl} from '../../api/client.js'
import {UsageError} from '../../errors.js'
import {maskKeyEnds, registerSecret} from '../../api/secrets.js'
import {apiKeyProblem} from '../../api/validate.js'
import {DEFAULT_PROFILE, loadConfig, saveConfig} from '../../config/profiles.js'
import {readSecret} from '../../keys/prompt.js'
import {paragraphs} from '../../cli/help-text.js'

export default class KeysSet extends BaseCommand<typeof KeysSet> {
  static override summary =
    'Store an API key (and base URL) in a profile; the key is read from stdin or a hidden prompt'
  static override description = paragraphs`Never takes the key as an argument. The config file is created with mode 0600 under the
CLI's config directory ($XDG_CONFIG_HOME/sfl, or $SFL_CONFIG_DIR).`

  static override examples = [
    {
      description: 'Type the key at a hidden prompt',
      command: '<%= config.bin %> keys set --base-url https://api.example.com/v1',
    },
    {
      description: 'From a secret manager, into a named profile',
      command: 'vault read -field=key secret/sfl | <%= config.bin %> keys set --profile prod',
    },
  ]

  static override flags = {
    profile: connectionFlags.profile,
    'base-url': connectionFlags['base-url'],
    // refused with a reason (the key would land in shell history), not as an unknown flag
    'api-key': Flags.string({
      hidden: true,
      description: 'Not accepted: the key is read from stdin or a prompt',
    }),
    fips: Flags.string({
      description: 'Default county of this profile, probed by `keys check` when no --fips is given',
    }),
  }

  async run(): Promise<void> {
    const f = this.flags
    if (f['api-key'])
      throw new UsageError(
        'keys set reads the key from stdin or a prompt, never from --api-key (it would land in shell history)',
      )
    const profile = f.profile ?? process.env['SFL_PROFILE'] ?? DEFAULT_PROFILE
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(profile))
      throw new UsageError(`--profile "${profile}": use letters, digits, dot, dash or underscore`)
    if (f['base-url']) assertSafeBaseUrl(f['base-url'])
    if (f['base-url']) (await import('../../api/endpoint-check.js')).assertVersionedBaseUrl(f['base-url'])
    if (f.fips !== undefined)
      (await import('../../address/county-flags.js')).countyFromFlags({fips: f.fips}, {countyFlag: false})
    const {config, path, warning} = await loadConfig(this.config.configDir)
    if (warning) this.warnAlways(warning)
    const key = await readSecret(`API key for profile "${profile}" (input hidden): `)
    if (key === '') throw new UsageError('no key given on stdin or at the prompt; nothing was saved')
    if (/\s/.test(key))
      throw new UsageError('the key contains whitespace; check what was pasted. Nothing was saved')
    const problem = apiKeyProblem(key)
    if (problem) throw new UsageError(`the key ${problem}. Nothing was saved`)
    registerSecret(key)
    const existing = config.profiles[profile] ?? {}
    config.profiles[profile] = {
      ...existing,
      apiKey: key,
      ...(f['base-url'] ? {baseUrl: f['base-url']} : {}),
      ...(f.fips ? {fips: f.fips} : {}),
    }
    await saveConfig(this.config.configDir, config)
    const base = config.profiles[profile].baseUrl
    this.notice(
      `Saved profile "${profile}" (key ${maskKeyEnds(key)}${base ? `, base URL ${base}` : ', no base URL: add --base-url or set SFL_BASE_URL'}) to ${path} (mode 600)`,
    )
  }
}
