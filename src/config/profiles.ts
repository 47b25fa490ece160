import type {Stats} from 'node:fs'
import {lstat, readFile, stat} from 'node:fs/promises'
import {dirname, join, resolve} from 'node:path'

import {LocalIoError, SflError, systemCode, UsageError} from '../errors.js'
import {writeFileAtomic} from '../io/atomic-file.js'
import {localIoError} from '../io/fs-errors.js'
import {ownerProblem} from '../io/owner-rule.js'
import {makeDirLevel} from '../io/private-files.js'

/**
 * Credential profiles in `<configDir>/config.json` (oclif's configDir: $XDG_CONFIG_HOME/sfl on Linux, or
 * $SFL_CONFIG_DIR). The file is created 0600; a looser mode is warned about, a malformed file is an error
 * that names it, and nothing ever resets it silently.
 *
 * The file decides where the key is sent (baseUrl), so it is trusted only when no other user could have
 * written it, the way ssh's StrictModes treats ~/.ssh: the file, its folder and the folder's parent must
 * be owned by the user (or root) and not writable by group or others. A world-writable parent with the
 * sticky bit (/tmp) is accepted, since others cannot rename or remove what the user created in it. The
 * rule itself is io's (src/io/owner-rule.ts), which an `--out-dir`'s folders follow too.
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
/** A config another user could have written (or that cannot be checked): refused even when not needed. */
export class UntrustedConfigError extends ConfigFileError {}

export function configPath(configDir: string): string {
  return join(configDir, CONFIG_FILE)
}

export interface LoadedConfig {
  path: string
  config: ConfigFile
  /** Present when the file is readable by others than its owner. */
  warning?: string
}

/** Why `st` (of `path`) could have been written by another user, with the command that fixes it; or undefined. */
export function trustProblem(
  path: string,
  st: Pick<Stats, 'uid' | 'mode'> & {isDirectory(): boolean; isSymbolicLink(): boolean},
  uid: number,
  role: 'file' | 'folder' | 'parent' | 'link',
): string | undefined {
  const what =
    role === 'file'
      ? `the config file ${path}`
      : role === 'link'
        ? `the symbolic link ${path} (the config file)`
        : role === 'folder'
          ? `the config folder ${path}`
          : `${path} (the folder holding the config folder)`
  // the one rule (src/io/owner-rule.ts): the user's or root's, and not writable by group or others
  const p = ownerProblem(st, uid, {stickyOk: role === 'parent'})
  if (p?.kind === 'owner')
    return `${what} belongs to another user (uid ${p.uid}), who could change where your key is sent or read it; fix: chown ${uid} ${path}, or set SFL_CONFIG_DIR to a folder of your own`
  if (role === 'link') return undefined // a link's own mode means nothing; its target is checked as the file
  if (p?.kind === 'writable')
    return `${what} is writable by other users (mode ${p.mode.toString(8)}), who could plant a config that sends your key elsewhere; fix: chmod go-w ${path}`
  return undefined
}

/**
 * Refuse (exit 2) a config file, folder or parent another user could have written. `file` may not exist
 * (before the first save). Not on Windows, which has no uid or mode bits to check.
 */
export async function assertTrustedConfig(configDir: string, uid = process.getuid?.()): Promise<void> {
  if (uid === undefined || process.platform === 'win32') return
  const dir = resolve(configDir)
  const file = join(dir, CONFIG_FILE)
  const checks: Array<[string, 'file' | 'folder' | 'parent' | 'link', () => Promise<Stats>]> = [
    [dirname(dir), 'parent', () => stat(dirname(dir))],
    [dir, 'folder', () => stat(dir)],
    [file, 'link', () => lstat(file)],
    [file, 'file', () => stat(file)],
  ]
  for (const [path, role, get] of checks) {
    let st: Stats
    try {
      st = await get()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw new UntrustedConfigError(`cannot check ${path}: ${(error as Error).message}`)
    }
    if (role === 'link' && !st.isSymbolicLink()) continue
    const problem = trustProblem(path, st, uid, role)
    if (problem) throw new UntrustedConfigError(`refusing to use ${problem}`)
  }
}

export async function loadConfig(configDir: string): Promise<LoadedConfig> {
  const path = configPath(configDir)
  const exists = await lstat(path).then(
    () => true,
    () => false,
  )
  // only a file that exists is read, so only then can a planted one do harm
  if (exists) await assertTrustedConfig(configDir)
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

/**
 * For runs that may not need the file (key and base URL from flags or the environment, as in CI): a file
 * that cannot be read or parsed comes back as `problem` with empty profiles, and the caller decides whether
 * to fail (it needs a profile value) or to warn. A file another user could have written is refused all the
 * same: that is never a formatting slip.
 */
export async function loadConfigLenient(
  configDir: string,
): Promise<LoadedConfig & {problem?: ConfigFileError}> {
  try {
    return await loadConfig(configDir)
  } catch (error) {
    if (!(error instanceof ConfigFileError) || error instanceof UntrustedConfigError) throw error
    return {path: configPath(configDir), config: {profiles: {}}, problem: error}
  }
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

/**
 * Write atomically with mode 0600 from the first byte, through writeFileAtomic (exclusive temp file with
 * an unpredictable name, no symlink following, fsync, rename). Refused when another user could write the
 * folder: they could swap the file or read the key.
 */
export async function saveConfig(configDir: string, config: ConfigFile): Promise<string> {
  const path = configPath(configDir)
  await assertTrustedConfig(configDir)
  await makeConfigFolder(resolve(configDir))
  await assertTrustedConfig(configDir) // the folder may have been created by someone else meanwhile
  try {
    await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`, 0o600)
  } catch (error) {
    throw configIoError(error, 'writing the config file', path)
  }
  return path
}

/**
 * Make the config folder (0700) and, when missing, the folder holding it (~/.config), never more: a
 * missing home folder or a mistyped SFL_CONFIG_DIR is named (exit 8), not built from `/` as a recursive
 * mkdir would (as root it succeeds anywhere). One mkdir a level also gets the true cause: on a read-only
 * file system a recursive mkdir says ENOENT, and under /proc it loops forever.
 */
async function makeConfigFolder(dir: string): Promise<void> {
  for (const [path, what] of [
    [dirname(dir), 'creating the folder that holds the config folder'],
    [dir, 'creating the config folder'],
  ] as const) {
    try {
      await makeDirLevel(path)
    } catch (error) {
      const code = systemCode(error)
      if (code === 'ENOENT')
        throw new LocalIoError(
          `cannot save the config: the folder ${dirname(path)} does not exist (sfl makes the config folder and the one holding it, never a home folder); create it, or set SFL_CONFIG_DIR to a folder of yours`,
        )
      throw configIoError(error, what, path)
    }
  }
}

/** A file-system failure while saving the config: one line naming the folder (exit 8), whatever the errno. */
function configIoError(error: unknown, doing: string, path: string): Error {
  const mapped = localIoError(error, doing, path)
  if (mapped instanceof LocalIoError)
    return new LocalIoError(`${mapped.message} (SFL_CONFIG_DIR sets where sfl keeps its config)`)
  if (mapped instanceof SflError || systemCode(error) === '') return mapped
  return new LocalIoError(`cannot save the config: ${(error as Error).message}`, {cause: error})
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
      `no profile named "${profile}"${known.length ? ` (known: ${known.join(', ')})` : ''}; \`sfl keys set\` creates one`,
      {facts: {topic: 'no-profile', profile, known}},
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
