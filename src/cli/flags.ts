// oclif's flag builders by their own entry, not @oclif/core's index: the lookup fast path
// (src/cli/lookup-fast.ts) defines and parses its flags without loading the rest of oclif
import * as Flags from '@oclif/core/flags'

/** The flags every command has (BaseCommand's baseFlags): --debug and --quiet. */
export const globalFlags = {
  debug: Flags.boolean({
    description: 'Show requests and responses on stderr (the key masked)',
    helpGroup: 'GLOBAL',
  }),
  quiet: Flags.boolean({
    char: 'q',
    description: 'No progress or notices on stderr (errors still shown)',
    helpGroup: 'GLOBAL',
  }),
}

/**
 * The connection flags, defined once: every command that sends a request has all of them (ServiceCommand);
 * `keys set`, `keys list` and `keys remove` take the ones they store or select (--profile, --base-url).
 */
export const connectionFlags = {
  'base-url': Flags.string({
    description: 'Service base URL including its /v1 segment [env: SFL_BASE_URL]',
    helpGroup: 'CONNECTION',
  }),
  'api-key': Flags.string({
    description:
      'API key, or - to read it from stdin (prefer SFL_API_KEY or `sfl keys set`: a key given as a flag lands in shell history and the process list) [env: SFL_API_KEY]',
    helpGroup: 'CONNECTION',
  }),
  profile: Flags.string({
    description: 'Credential profile to use [env: SFL_PROFILE]',
    helpGroup: 'CONNECTION',
  }),
  sandbox: Flags.boolean({
    description: 'Run against the embedded sandbox (synthetic data, demo key sandbox-full)',
    helpGroup: 'CONNECTION',
  }),
  timeout: Flags.integer({
    description:
      'Deadline in seconds for each request as a whole: connect, headers and reading the body [default: 30; county-export 900, a whole county can be one body]',
    min: 1,
    helpGroup: 'CONNECTION',
  }),
  retries: Flags.integer({
    description: 'Retries for 5xx and network errors',
    default: 3,
    min: 0,
    helpGroup: 'CONNECTION',
  }),
  'max-wait': Flags.integer({
    description:
      'Longest wait in seconds for a rate-limit reset before giving up (exit 5) [default: 60; county-export 3600]',
    min: 0,
    helpGroup: 'CONNECTION',
  }),
}

/** The base flags of every command that sends a request (ServiceCommand, and the lookup fast path). */
export const serviceBaseFlags = {...globalFlags, ...connectionFlags}
