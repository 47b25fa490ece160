import {UsageError} from '../errors.js'
import {countyByFips} from '../address/counties.js'
import {loadConfigLenient, resolveSettings} from '../config/profiles.js'
import {SANDBOX_CHECK_FIPS, type KeySource} from './check.js'

/**
 * Which counties `keys check` probes and where the key came from. No guessing against a real service: the
 * asked --fips, else the profile's default county, else (with --sandbox only) the sandbox's demo county;
 * otherwise a usage error asking for --fips.
 */
export async function planCheck(input: {
  fips: string[]
  sandbox: boolean
  configDir: string
  flags: {profile?: string | undefined; baseUrl?: string | undefined; apiKey?: string | undefined}
  keyInUse: string
}): Promise<{
  fips: string[]
  why: 'asked' | 'profile default' | 'sandbox demo county'
  keySource: KeySource
  countyName: (fips: string) => string | undefined
}> {
  // the base command has already decided that a malformed config is not needed for the key and URL; it
  // is needed here only for the profile's default county
  const {config, problem} = await loadConfigLenient(input.configDir)
  if (problem && !input.fips.length && !input.sandbox) throw problem
  const settings = resolveSettings(input.flags, process.env, config)
  const keySource: KeySource =
    input.sandbox && settings.apiKey !== input.keyInUse ? 'sandbox' : (settings.apiKeySource ?? 'sandbox')
  const countyName = (fips: string) => {
    const c = countyByFips(fips)
    return c ? `${c.name}, ${c.state}` : undefined
  }
  if (input.fips.length) return {fips: input.fips, why: 'asked', keySource, countyName}
  const fromProfile = config.profiles[settings.profile]?.fips
  if (fromProfile) return {fips: [fromProfile], why: 'profile default', keySource, countyName}
  if (input.sandbox) return {fips: [SANDBOX_CHECK_FIPS], why: 'sandbox demo county', keySource, countyName}
  throw new UsageError(
    `a key check needs a county to probe: none was given, and profile ${settings.profile} has no default county`,
    {facts: {topic: 'county-needed', profile: settings.profile}},
  )
}
