import type {Dispatcher} from 'undici'

import {assertSafeBaseUrl, HttpClient, type ClientEvent} from '../api/client.js'
import {assertVersionedBaseUrl} from '../api/endpoint-check.js'
import {registerSecret} from '../api/secrets.js'
import {apiKeyProblem} from '../api/validate.js'
import {MissingKeyError, UsageError} from '../errors.js'
import {Scheduler, type SchedulerEvent, type SchedulerOptions} from '../schedule/scheduler.js'

/**
 * The one way a client and its scheduler are made, for the CLI's commands (src/cli/service-command.ts) and
 * for programs (src/lib/client.ts): the base URL and key checked before any request (https, or http to a
 * loopback host only; the /v1 segment; a key that can go in a header), the key registered with the
 * redactor, every request through the one scheduler (budget, retries, circuit breaker).
 */
export interface CoreOptions {
  baseUrl: string
  apiKey: string
  /** Where the key came from, named when it cannot be sent ("SFL_API_KEY", "--api-key"...). */
  keyOrigin?: string | undefined
  timeoutMs: number
  retries: number
  maxWaitMs: number
  concurrency?: number | undefined
  userAgent: string
  dispatcher?: Dispatcher | undefined
  signal?: AbortSignal | undefined
  debug?: ((line: string) => void) | undefined
  onClientEvent?: ((e: ClientEvent) => void) | undefined
  onSchedulerEvent?: ((e: SchedulerEvent) => void) | undefined
  schedule?: Partial<SchedulerOptions> | undefined
}

export interface Core {
  baseUrl: string
  /** The key in use; print only through maskKey. */
  apiKey: string
  client: HttpClient
  scheduler: Scheduler
}

/** Refuse a base URL the key must not go to (plain http off this machine) or that lacks its /v1 segment (spec 4, 9.1). */
export function checkBaseUrl(baseUrl: string): void {
  if (!baseUrl)
    throw new UsageError('no service base URL: set SFL_BASE_URL, or store one with `sfl keys set`', {
      facts: {topic: 'no-base-url'},
    })
  assertSafeBaseUrl(baseUrl)
  assertVersionedBaseUrl(baseUrl)
}

export function createCore(o: CoreOptions): Core {
  checkBaseUrl(o.baseUrl)
  if (!o.apiKey)
    throw new MissingKeyError('no API key: set SFL_API_KEY, or store one with `sfl keys set`', {
      facts: {topic: 'no-key'},
    })
  const problem = apiKeyProblem(o.apiKey)
  if (problem)
    throw new UsageError(
      `the API key${o.keyOrigin ? ` (from ${o.keyOrigin})` : ''} ${problem}; nothing was sent`,
    )
  registerSecret(o.apiKey)
  const client = new HttpClient({
    apiKey: o.apiKey,
    timeoutMs: o.timeoutMs,
    userAgent: o.userAgent,
    dispatcher: o.dispatcher,
    debug: o.debug,
    onEvent: o.onClientEvent,
  })
  const scheduler = new Scheduler({
    concurrency: o.concurrency ?? 1,
    retries: o.retries,
    maxWaitMs: o.maxWaitMs,
    ...(o.signal ? {signal: o.signal} : {}),
    ...(o.onSchedulerEvent ? {onEvent: o.onSchedulerEvent} : {}),
    ...o.schedule,
  })
  return {baseUrl: o.baseUrl, apiKey: o.apiKey, client, scheduler}
}
