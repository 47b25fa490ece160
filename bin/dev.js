#!/usr/bin/env node
// Development entry: runs the TypeScript sources through tsx-free node by using the built dist.
// Build first (`npm run build`); kept so the layout matches oclif's template.
import {execute} from '@oclif/core'

await execute({development: false, dir: import.meta.url})
