import {readFileSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {join} from 'node:path'

/** The part of oclif's Config a command run reads: the package's name and version, the bin, the config folder. */
export interface CliConfig {
  name: string
  version: string
  bin: string
  configDir: string
  cacheDir: string
  /** The flags that ask for help anywhere before `--`: `--help` and package.json oclif.additionalHelpFlags. */
  helpFlags: string[]
}

export interface PackageJson {
  name: string
  version: string
  oclif?: {bin?: string; dirname?: string; binAliases?: string[]; additionalHelpFlags?: string[]}
}

/**
 * Pure: oclif's Config.configDir and cacheDir (@oclif/core 4, config/config.js), so a run that does not load
 * oclif reads the same config.json. The config folder: SFL_CONFIG_DIR (for the bin and each bin alias, the
 * first that is set), else $XDG_CONFIG_HOME/sfl, else %LOCALAPPDATA%\sfl on Windows, else ~/.config/sfl.
 * The cache folder: SFL_CACHE_DIR, else ~/Library/Caches/sfl on macOS, else $XDG_CACHE_HOME/sfl, else
 * %LOCALAPPDATA%\sfl on Windows, else ~/.cache/sfl. The home folder is oclif's too: $HOME, then Windows'
 * HOMEDRIVE+HOMEPATH or USERPROFILE, then os.homedir(), then the temp folder. test/cli/cli-config.test.ts
 * holds them equal to oclif's.
 */
export function oclifDirs(
  pjson: PackageJson,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  home: () => string = homedir,
): {configDir: string; cacheDir: string} {
  const bin = pjson.oclif?.bin || pjson.name
  const scoped = (k: string): string | undefined => {
    for (const alias of [bin, ...(pjson.oclif?.binAliases ?? [])]) {
      const value = env[`${alias.replaceAll('@', '').replaceAll(/[/-]/g, '_')}_${k}`.toUpperCase()]
      if (value) return value
    }
    return undefined
  }
  const windows = platform === 'win32'
  let dirname = pjson.oclif?.dirname || pjson.name
  if (windows) dirname = dirname.replace('/', '\\')
  const windowsHome =
    (env['HOMEDRIVE'] && env['HOMEPATH'] && join(env['HOMEDRIVE'], env['HOMEPATH'])) || env['USERPROFILE']
  const userHome = env['HOME'] || (windows && windowsHome) || home() || tmpdir()
  const dir = (category: 'config' | 'cache'): string =>
    join(
      env[`XDG_${category.toUpperCase()}_HOME`] ||
        (windows && env['LOCALAPPDATA']) ||
        join(userHome, `.${category}`),
      dirname,
    )
  return {
    configDir: scoped('CONFIG_DIR') || dir('config'),
    cacheDir:
      scoped('CACHE_DIR') ||
      (platform === 'darwin' ? join(userHome, 'Library', 'Caches', dirname) : undefined) ||
      dir('cache'),
  }
}

/**
 * The package's package.json, found from the entry's URL as oclif finds it: beside dist/ for the bundle
 * (dist/*.js), two levels up from the source (src/cli/*.ts).
 */
export function readPackageJson(entryUrl: string | URL): PackageJson {
  let text: string
  try {
    text = readFileSync(new URL('../package.json', entryUrl), 'utf8')
  } catch {
    text = readFileSync(new URL('../../package.json', entryUrl), 'utf8')
  }
  return JSON.parse(text) as PackageJson
}

/** Pure: the CLI's config from its package.json and the environment, as oclif's Config has it. */
export function cliConfigOf(pjson: PackageJson, env: NodeJS.ProcessEnv = process.env): CliConfig {
  return {
    name: pjson.name,
    version: pjson.version,
    bin: pjson.oclif?.bin || pjson.name,
    ...oclifDirs(pjson, env, process.platform),
    // oclif's getHelpFlagAdditions (help/util.js)
    helpFlags: [...new Set([...(pjson.oclif?.additionalHelpFlags ?? []), '--help'])],
  }
}

/**
 * Pure: oclif's test for help (@oclif/core main.js `helpAddition`): any of the help flags (`--help`, and
 * package.json oclif.additionalHelpFlags) before a `--`.
 */
export function wantsHelp(argv: readonly string[], helpFlags: readonly string[]): boolean {
  for (const arg of argv) {
    if (helpFlags.includes(arg)) return true
    if (arg === '--') return false
  }
  return false
}
