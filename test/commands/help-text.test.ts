import {Config, Help} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {paragraphs} from '../../src/cli/help-text.js'
import {COMMANDS} from '../../src/commands/index.js'
import {ROOT} from '../helpers/sandbox.js'

describe('help text wraps at the reader’s width, never mid-sentence', () => {
  it('paragraphs: a line break inside a paragraph is a space; a blank line separates paragraphs', () => {
    expect(paragraphs`One sentence
wrapped in the source.

A second ${'paragraph'},
  indented.
`).toBe('One sentence wrapped in the source.\n\nA second paragraph, indented.')
  })

  it.each(Object.entries(COMMANDS))(
    '%s: no line break inside a paragraph of its description or flags',
    (id, cmd) => {
      const c = cmd as {
        description?: string
        summary?: string
        flags?: Record<string, {description?: string}>
      }
      for (const text of [c.description ?? '', c.summary ?? ''])
        for (const p of text.split('\n\n')) expect(p, `${id}: ${p.slice(0, 60)}`).not.toContain('\n')
      for (const [name, flag] of Object.entries(c.flags ?? {}))
        expect(flag.description ?? '', `${id} --${name}`).not.toContain('\n')
    },
  )

  it('sfl lookup --help at 80 columns: each description paragraph is whole lines of one paragraph', async () => {
    // the help oclif prints, from the built manifest (npm test builds first), at 80 columns
    class Captured extends Help {
      out = ''
      protected override log(...args: string[]): void {
        this.out += `${args.join('\n')}\n`
      }
    }
    const help = new Captured(await Config.load({root: ROOT}), {maxWidth: 80, stripAnsi: true})
    await help.showHelp(['lookup'])
    const out = help.out
    const description = out.slice(out.indexOf('\nDESCRIPTION\n'), out.indexOf('\nEXAMPLES\n'))
    const shown = description
      .split('\n\n')
      .slice(1)
      .map((p) => p.replace(/\s+/g, ' ').trim())
    const source = COMMANDS.lookup.description!.split('\n\n')
    expect(shown).toEqual(source)
    // a line that is not a paragraph's last is filled: no ragged break after a few words
    for (const p of description.split('\n\n').slice(1)) {
      const lines = p.split('\n').filter((l) => l.trim() !== '')
      for (const l of lines.slice(0, -1)) expect(l.length, l).toBeGreaterThan(60)
    }
  })
})
