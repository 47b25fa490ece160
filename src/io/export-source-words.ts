import type {ExportSourceProblem} from '../errors.js'

const IS = {FIFO: 'FIFO', device: 'device', socket: 'socket', link: 'symbolic link', other: 'special file'}

const MIB = 1024 * 1024
const size = (bytes: number) =>
  bytes >= 1024 * MIB
    ? `${Math.round((bytes / (1024 * MIB)) * 10) / 10} GiB`
    : bytes >= MIB
      ? `${Math.round((bytes / MIB) * 10) / 10} MiB`
      : `${bytes} bytes`

/**
 * An export path's problem in one line (src/io/export-source.ts): the path and what is wrong with it, never
 * a byte of its content. `folder` names an export folder as the caller's user knows it (the CLI: "an
 * --out-dir folder"). Pure; a module of its own so that the CLI's error wording loads nothing else.
 */
export function exportSourceText(
  path: string,
  p: ExportSourceProblem,
  folder = 'an export folder (where county-export wrote its _sfl/manifest.json)',
): string {
  switch (p.kind) {
    case 'missing':
      return `${path}: no such file or folder`
    case 'not-regular':
      return `${path} is a ${IS[p.is]}, not an export: only regular files and folders are read`
    case 'system-path':
      return `${path} is under /proc, /sys or /dev, not an export: only export files and folders are read`
    case 'too-large':
      return `${path} is larger than ${size(p.limitBytes)}, the most this reader takes; not read`
    case 'line-too-long':
      return `${path} has a line longer than ${size(p.limitBytes)}, which no export has; not read`
    case 'not-an-export':
      return `${path} is not an sfl export: ${p.why}; nothing more of it was read`
    case 'folder-without-manifest':
      return `${path} is a folder without _sfl/manifest.json; give an export file or ${folder}`
    case 'county-file-missing':
      return `${path}: the file of county ${p.fips} (${p.file}) is missing`
    case 'outside-folder':
      return `${path}: the file of county ${p.fips} is outside the export's folder; not read`
    case 'unreadable':
      return `${path}: cannot be read (${p.code})`
    case 'codec-unavailable':
      return `${path}: its columns are ${p.codec}-compressed, which needs ${p.needs} to read; this is Node ${p.node}`
    case 'damaged':
      return p.format === 'parquet'
        ? `${path}: not a readable Parquet file`
        : `${path}${p.line === undefined ? '' : ` line ${p.line}`}: ${p.format === 'csv' ? 'not a readable CSV export' : 'not a JSON record'}`
  }
}
