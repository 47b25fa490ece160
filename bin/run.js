#!/usr/bin/env node
// On Node 22.1+ keep V8's compiled code between runs (start-up is most of a single lookup's time);
// Node 20 has no such cache and skips this.
import module from 'node:module'

module.enableCompileCache?.()

const {main} = await import('../dist/sfl.js')
await main()
