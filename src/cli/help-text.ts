/**
 * A command's description as paragraphs: written wrapped in the source (lines of ~110 characters), shown
 * by `--help` and the README wrapped at the reader's width. oclif wraps each line of a description on its
 * own, so a line break left inside a sentence shows as a ragged break mid-sentence at 80 columns; here a
 * single line break becomes a space and only a blank line separates paragraphs. Pure.
 *
 * @example paragraphs`One sentence
 * wrapped in the source.` // 'One sentence wrapped in the source.'
 */
export function paragraphs(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = strings.reduce((out, s, i) => out + s + (i < values.length ? String(values[i]) : ''), '')
  return text
    .split(/\n[ \t]*\n\s*/)
    .map((p) => p.replace(/[ \t]*\n[ \t]*/g, ' ').trim())
    .filter((p) => p !== '')
    .join('\n\n')
}
