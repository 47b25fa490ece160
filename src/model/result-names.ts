/**
 * The prefix of a result column whose name an input column already has. `sfl_` rather than `sfl.` or a
 * space: `sfl_City` is a plain identifier in pandas (`df.sfl_City`), DuckDB and SQL (no quoting), and Excel,
 * where a dot would read like pandas' own `City.1` for a duplicate.
 */
export const COLLISION_PREFIX = 'sfl_'

/**
 * Names for sfl's own columns of a batch output (status, error, note, then the record's fields) beside the
 * input's, which keep their names exactly as typed. A name that matches an input column, or an earlier one of
 * ours, ignoring case (Excel, DuckDB and SQL compare names so) gets `sfl_` in front, again until it is free:
 * no column appears twice. Pure.
 *
 * @example resultNames(['FIPS', 'Address', 'City'], ['status', 'City']) // ['status', 'sfl_City']
 */
export function resultNames(input: readonly string[], ours: readonly string[]): string[] {
  const taken = new Set(input.map((c) => c.toLowerCase()))
  return ours.map((name) => {
    let n = name
    while (taken.has(n.toLowerCase())) n = `${COLLISION_PREFIX}${n}`
    taken.add(n.toLowerCase())
    return n
  })
}
