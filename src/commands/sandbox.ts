import {Command, Flags} from '@oclif/core'

import {DEMO_KEYS} from '../sandbox/keys.js'
import {paragraphs} from '../cli/help-text.js'

export default class SandboxCommand extends Command {
  static override summary = 'Start a local, spec-faithful emulator of the service on synthetic data'
  static override description = paragraphs`Serves GET /v1/special-financing with the spec's fields, options, errors and rate limits,
on deterministic synthetic data (counties 06067, 06037, 48201 and 12086). Prints the base URL and the demo keys;
Ctrl-C stops it. --page-size 0 sends a county as one JSON array; N > 0 pages it with an RFC 8288 Link header.`

  static override examples = [
    {description: 'Start on the default port', command: '<%= config.bin %> sandbox'},
    {
      description: 'A tight rate limit and injected faults, for testing a client',
      command:
        '<%= config.bin %> sandbox --limit 20 --window 5 --fail-rate 0.05 --reset-rate 0.02 --log requests.ndjson',
    },
    {
      description: 'A million-record county, paged',
      command: '<%= config.bin %> sandbox --records 1000000 --page-size 5000',
    },
  ]

  static override flags = {
    port: Flags.integer({
      description: 'Port to listen on (0 picks a free one)',
      default: 8787,
      min: 0,
      max: 65535,
    }),
    host: Flags.string({description: 'Interface to listen on', default: '127.0.0.1'}),
    seed: Flags.integer({description: 'Seed of the synthetic data', default: 1}),
    records: Flags.integer({description: 'Records of the large county 48201', default: 100_000, min: 0}),
    limit: Flags.integer({description: 'Requests per window per key', default: 1000, min: 1}),
    window: Flags.integer({description: 'Rate-limit window in seconds', default: 3600, min: 1}),
    'page-size': Flags.integer({
      description: 'County page size; 0 sends the whole county as one array',
      default: 0,
      min: 0,
    }),
    'fail-rate': Flags.string({description: 'Probability that a request fails with 500', default: '0'}),
    'reset-rate': Flags.string({description: 'Probability that a connection is reset', default: '0'}),
    'truncate-rate': Flags.string({description: 'Probability that a body is cut short', default: '0'}),
    latency: Flags.integer({description: 'Added delay per request, ms', default: 0, min: 0}),
    log: Flags.string({description: 'Append one JSON line per request to this file (key masked)'}),
    match: Flags.option({
      options: ['lenient', 'strict'] as const,
      default: 'lenient' as const,
      description:
        "Address matching: lenient forgives spellings; strict accepts only the service's standardised form (as a real server may)",
    })(),
    'null-flat-fields': Flags.boolean({
      description:
        'Send the flat FHA project fields as null on non-condo records (spec 2.1 leaves their presence open)',
    }),
  }

  async run(): Promise<void> {
    const {flags: f} = await this.parse(SandboxCommand)
    const rate = (name: string, v: string) => {
      const n = Number(v)
      if (!Number.isFinite(n) || n < 0 || n > 1)
        this.error(`--${name} must be a probability from 0 to 1 (got "${v}")`, {exit: 2})
      return n
    }
    // the server and its dataset generator load only when a sandbox starts, not with the command list
    const {startSandbox} = await import('../sandbox/server.js')
    const sandbox = await startSandbox({
      match: f.match,
      nullFlatFields: f['null-flat-fields'],
      host: f.host,
      port: f.port,
      seed: f.seed,
      records: f.records,
      limit: f.limit,
      windowSeconds: f.window,
      pageSize: f['page-size'],
      failRate: rate('fail-rate', f['fail-rate']),
      resetRate: rate('reset-rate', f['reset-rate']),
      truncateRate: rate('truncate-rate', f['truncate-rate']),
      latencyMs: f.latency,
      log: f.log,
    }).catch((error: unknown) => {
      // one line and a usage exit code, not a raw `listen EADDRINUSE` stack
      const code = (error as {code?: string}).code
      if (code === 'EADDRINUSE')
        this.error(
          `port ${f.port} on ${f.host} is in use: pick another with --port, or --port 0 for a free one`,
          {exit: 2},
        )
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        this.error(
          `cannot listen on --host ${f.host} (${code}): use an address of this machine, e.g. 127.0.0.1`,
          {exit: 2},
        )
      throw error
    })
    const lines = [
      `Sandbox listening: ${sandbox.baseUrl}`,
      ...(f.host === '0.0.0.0' || f.host === '::'
        ? [`(on every interface; from this machine use the URL above)`]
        : []),
      ...(f.match === 'strict' ? ['Address matching: strict (the standardised form only)'] : []),
      `export SFL_BASE_URL=${sandbox.baseUrl}`,
      'Demo keys (synthetic data; not secrets):',
      ...DEMO_KEYS.map((k) => `  ${k.name.padEnd(20)} ${k.description}`),
      'Press Ctrl-C to stop.',
    ]
    process.stdout.write(`${lines.join('\n')}\n`)
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        void sandbox.close().then(resolve)
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
    })
  }
}
