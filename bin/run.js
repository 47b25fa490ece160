#!/usr/bin/env node
// On Node 22.1+ keep V8's compiled code between runs (start-up is most of a single lookup's time);
// Node 20 has no such cache and skips this.
import module from 'node:module'

module.enableCompileCache?.()

// the bundle (`npm run build`, scripts/build.mjs): dist/sfl.js answers --version and hands the rest to oclif
const {main} = await import('../dist/sfl.js')
await main()
