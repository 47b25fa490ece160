/**
 * The INI dialect of `~/.aws/credentials` and `~/.aws/config` (AWS CLI User Guide, "Configuration and
 * credential file settings"): `[section]` headers, `name = value` lines, whole-line comments starting with
 * `#` or `;`, and one level of nesting: a `name =` line with no value opens a sub-section whose settings
 * are the indented lines that follow (`s3 =` then `  addressing_style = path`).
 *
 * Names are lower-cased (the CLI treats them so); values keep their case and lose surrounding spaces. A
 * later section of the same name adds to the earlier one, a later setting replaces an earlier one.
 */
export type IniSection = Map<string, string | Map<string, string>>
export type IniFile = Map<string, IniSection>

export function parseIni(text: string): IniFile {
  const file: IniFile = new Map()
  let section: IniSection | undefined
  let nested: Map<string, string> | undefined
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const header = /^\[\s*([^\]]*?)\s*\]$/.exec(line)
    if (header) {
      const name = (header[1] ?? '').replace(/\s+/g, ' ')
      section = file.get(name) ?? new Map()
      file.set(name, section)
      nested = undefined
      continue
    }
    const eq = line.indexOf('=')
    if (!section || eq <= 0) continue // a setting before any section, or a line that is not one: ignored
    const name = line.slice(0, eq).trim().toLowerCase()
    const value = line.slice(eq + 1).trim()
    const indented = /^\s/.test(raw)
    if (indented && nested) {
      nested.set(name, value)
      continue
    }
    if (value === '') {
      nested = new Map()
      section.set(name, nested)
      continue
    }
    nested = undefined
    section.set(name, value)
  }
  return file
}

/** A plain setting of a section (not a sub-section), or undefined. */
export function setting(section: IniSection | undefined, name: string): string | undefined {
  const v = section?.get(name)
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** A setting of a sub-section (`s3 =` then `endpoint_url = ...`), or undefined. */
export function nestedSetting(
  section: IniSection | undefined,
  sub: string,
  name: string,
): string | undefined {
  const v = section?.get(sub)
  if (!(v instanceof Map)) return undefined
  const inner = v.get(name)
  return inner === undefined || inner === '' ? undefined : inner
}
