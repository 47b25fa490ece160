import {commands as helpPlugin} from '@oclif/plugin-help'

// @oclif/plugin-autocomplete exports no command classes from its entry ("exports" allows only the
// entry), so they are imported by file; the build bundles them like the rest (see scripts/build.mjs)
import Autocomplete from '../../node_modules/@oclif/plugin-autocomplete/lib/commands/autocomplete/index.js'
import AutocompleteCreate from '../../node_modules/@oclif/plugin-autocomplete/lib/commands/autocomplete/create.js'
import AutocompleteScript from '../../node_modules/@oclif/plugin-autocomplete/lib/commands/autocomplete/script.js'
import Changes from './changes.js'
import Counties from './counties.js'
import CountyExport from './county-export.js'
import KeysCheck from './keys/check.js'
import KeysList from './keys/list.js'
import KeysRemove from './keys/remove.js'
import KeysSet from './keys/set.js'
import Lookup from './lookup.js'
import Mcp from './mcp.js'
import Sandbox from './sandbox.js'
import Schema from './schema.js'
import Stats from './stats.js'

/**
 * Every command, for oclif's explicit command discovery (package.json `oclif.commands`): oclif neither
 * scans a directory nor loads one file per command, and the bundle carries them all. The key is the
 * command id; keep it in step with the file's path under src/commands (the id `oclif readme` documents).
 *
 * help and autocomplete come from oclif's plugins, registered here instead of in `oclif.plugins`: a plugin
 * is a package oclif finds and reads (package.json, manifest) at every start, and would bring its own copy
 * of @oclif/core; bundled here they share the CLI's.
 */
export const COMMANDS = {
  autocomplete: Autocomplete,
  'autocomplete:create': AutocompleteCreate,
  'autocomplete:script': AutocompleteScript,
  changes: Changes,
  counties: Counties,
  'county-export': CountyExport,
  help: helpPlugin.help,
  'keys:check': KeysCheck,
  'keys:list': KeysList,
  'keys:remove': KeysRemove,
  'keys:set': KeysSet,
  lookup: Lookup,
  mcp: Mcp,
  sandbox: Sandbox,
  schema: Schema,
  stats: Stats,
}
