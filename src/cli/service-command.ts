import {Command, Interfaces} from '@oclif/core'

import type {SflError} from '../errors.js'
import type {SchedulerOptions} from '../schedule/scheduler.js'
import {BaseCommand} from './base-command.js'
import {Connection, SERVICE_DEFAULTS, type Context} from './connection.js'
import type {RunOrigin} from './error-hints.js'
import {serviceBaseFlags} from './flags.js'

export type {Context} from './connection.js'

export type ServiceFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof ServiceCommand)['baseFlags'] & T['flags']
>

/**
 * A command that talks to the service (lookup, county-export, keys check): the connection flags, and the
 * run's Connection (src/cli/connection.ts: flag > env > profile, the client and scheduler built from it).
 */
export abstract class ServiceCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = serviceBaseFlags

  declare flags: ServiceFlags<T>
  private connection?: Connection
  /** Default of --max-wait for this command, seconds. */
  protected static defaultMaxWait: number = SERVICE_DEFAULTS.maxWait
  /** Default of --timeout for this command, seconds. */
  protected static defaultTimeout: number = SERVICE_DEFAULTS.timeout

  public override async init(): Promise<void> {
    await super.init()
    const ctor = this.constructor as typeof ServiceCommand
    this.connection = new Connection(this.flags, {
      configDir: this.config.configDir,
      userAgent: `${this.config.name}/${this.config.version} node/${process.versions.node}`,
      defaultTimeout: ctor.defaultTimeout,
      defaultMaxWait: ctor.defaultMaxWait,
      warnAlways: (line) => this.warnAlways(line),
      notice: (line) => this.notice(line),
      debugLine: this.debugLine,
    })
  }

  /** Where the base URL and key in use came from (after `context`), for the hints of src/cli/error-hints.ts. */
  protected get origin(): RunOrigin | undefined {
    return this.connection?.runOrigin
  }

  /** The error's message with the fix the run's settings point to (the base URL in use, the key's source). */
  protected override errorMessage(err: SflError): string {
    return this.connection ? this.connection.errorMessage(err) : super.errorMessage(err)
  }

  /** The base URL a run would use (flag > env > profile), or undefined; no key needed, nothing sent. */
  protected async baseUrlInUse(): Promise<string | undefined> {
    return this.conn().baseUrlInUse()
  }

  /** Register every key the config holds as a secret, before reading a file that could contain one. */
  protected async maskConfiguredKeys(): Promise<void> {
    await this.conn().maskConfiguredKeys()
  }

  /** Resolve base URL and key (flag > env > profile), refuse unsafe ones, and build the client + scheduler. */
  async context(schedule: Partial<SchedulerOptions> = {}): Promise<Context> {
    return this.conn().context(schedule)
  }

  private conn(): Connection {
    if (!this.connection) throw new Error('ServiceCommand: context() before init()')
    return this.connection
  }

  protected override async catch(
    err: Error & {exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    this.connection?.stopFeedback() // no status line left under the error
    return super.catch(err)
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    await this.connection?.close()
    return super.finally(err)
  }
}
