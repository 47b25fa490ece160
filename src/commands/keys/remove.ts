import {BaseCommand} from '../../cli/base-command.js'
import {connectionFlags} from '../../cli/flags.js'
import {UsageError} from '../../errors.js'
import {loadConfig, saveConfig} from '../../config/profiles.js'

export default class KeysRemove extends BaseCommand<typeof KeysRemove> {
  static override summary = 'Remove a stored profile (the key stays valid: revoke it in the partner portal)'
  static override examples = ['<%= config.bin %> keys remove --profile prod']

  static override flags = {profile: connectionFlags.profile}

  async run(): Promise<void> {
    const name = this.flags.profile
    if (!name) throw new UsageError('name the profile to remove with --profile NAME (see `sfl keys list`)')
    const {config} = await loadConfig(this.config.configDir)
    if (!config.profiles[name])
      throw new UsageError(
        `no profile named "${name}" (known: ${Object.keys(config.profiles).join(', ') || 'none'})`,
      )
    delete config.profiles[name]
    const path = await saveConfig(this.config.configDir, config)
    this.notice(`Removed profile "${name}" from ${path}.`)
  }
}
