import {chmod, mkdir, readFile, rename, stat, writeFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'

import {UsageError} from '../api/errors.js'

/**
 * Credential profiles in `<configDir>/config.json` (oclif's configDir: $XDG_CONFIG_HOME/sfl on Linux, or
 * $SFL_CONFIG_DIR). The file is created 0600; a looser mode is warned about, a malformed file is an error
 * that names it, and nothing ever resets it silently.
 */
export interface Profile {
  baseUrl?: string
  apiKey?: string
  /** The county `keys check` probes when no --fips is given (`sfl keys set --fips`). */
  fips?: string
}
export interface ConfigFile {
  profiles: Record<string, Profile>
}

export const CONFIG_FILE = 'config.json'
export const DEFAULT_PROFILE = 'default'

export class ConfigFileError extends UsageError {}

export function configPath(configDir: string): string {
  return join(configDir, CONFIG_FILE)
}

export interface LoadedConfig {
  path: string
  config: ConfigFile
  /** Present when the file is readable by others than its owner. */
  warning?: string
}

export async function loadConfig(configDir: string): Promise<LoadedConfig> {
  const path = configPath(configDir)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {path, config: {profiles: {}}}
    throw new ConfigFileError(`cannot read the config file ${path}: ${(error as Error).message}`)
  }
  const out: LoadedConfig = {path, config: parseConfig(text, path)}
  const mode = (await stat(path)).mode & 0o777
  if (process.platform !== 'win32' && (mode & 0o077) !== 0)
    out.warning = `the config file ${path} holds API keys but is readable by others (mode ${mode.toString(8)}); run: chmod 600 ${path}`
  return out
}

/** Pure: parse and check the shape; throws a ConfigFileError naming the file and the problem. */
export function parseConfig(text: string, path: string): ConfigFile {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new ConfigFileError(
      `the config file ${path} is not valid JSON (${(error as Error).message}); fix it by hand or remove it and run \`sfl keys set\` again`,
    )
  }
  const profiles = (raw as {profiles?: unknown})?.profiles
  if (
    typeof raw !== 'object' ||
    raw === null ||
    typeof profiles !== 'object' ||
    profiles === null ||
    Array.isArray(profiles)
  )
    throw new ConfigFileError(
      `the config file ${path} has no "profiles" object; expected {"profiles": {"default": {...}}}`,
    )
  for (const [name, p] of Object.entries(profiles as Record<string, unknown>)) {
    const prof = p as Record<string, unknown>
    if (typeof p !== 'object' || p === null)
      throw new ConfigFileError(`the config file ${path}: profile "${name}" is not an object`)
    for (const field of ['baseUrl', 'apiKey', 'fips'])
      if (prof[field] !== undefined && typeof prof[field] !== 'string')
        throw new ConfigFileError(
          `the config file ${path}: profile "${name}" field ${field} must be a string`,
        )
  }
  return raw as ConfigFile
}

/** Write atomically (temp file + rename) with mode 0600 from the first byte. */
export async function saveConfig(configDir: string, config: ConfigFile): Promise<string> {
  const path = configPath(configDir)
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  const tmp = `${path}.${process.pid}.tmp`
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, {mode: 0o600})
  await chmod(tmp, 0o600)
  await rename(tmp, path)
  return path
}

export interface ResolvedSettings {
  profile: string
  baseUrl?: string | undefined
  apiKey?: string | undefined
  baseUrlSource?: 'flag' | 'env' | 'profile' | undefined
  apiKeySource?: 'flag' | 'env' | 'profile' | undefined
}

/** Precedence, documented in the README: flag, then environment, then the selected profile. */
export function resolveSettings(
  flags: {profile?: string | undefined; baseUrl?: string | undefined; apiKey?: string | undefined},
  env: NodeJS.ProcessEnv,
  config: ConfigFile,
): ResolvedSettings {
  const profile = flags.profile ?? env['SFL_PROFILE'] ?? DEFAULT_PROFILE
  const p = config.profiles[profile]
  if (
    (flags.profile !== undefined || env['SFL_PROFILE'] !== undefined) &&
    !p &&
    profile !== DEFAULT_PROFILE
  ) {
    const known = Object.keys(config.profiles)
    throw new UsageError(
      `no profile named "${profile}"${known.length ? ` (known: ${known.join(', ')})` : ''}; create it with \`sfl keys set --profile ${profile}\``,
    )
  }
  const pick = (flag: string | undefined, envValue: string | undefined, profileValue: string | undefined) =>
    flag !== undefined && flag !== ''
      ? ({value: flag, source: 'flag'} as const)
      : envValue !== undefined && envValue !== ''
        ? ({value: envValue, source: 'env'} as const)
        : profileValue !== undefined && profileValue !== ''
          ? ({value: profileValue, source: 'profile'} as const)
          : undefined
  const base = pick(flags.baseUrl, env['SFL_BASE_URL'], p?.baseUrl)
  const key = pick(flags.apiKey, env['SFL_API_KEY'], p?.apiKey)
  return {
    profile,
    baseUrl: base?.value,
    baseUrlSource: base?.source,
    apiKey: key?.value,
    apiKeySource: key?.source,
  }
}
