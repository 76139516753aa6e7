// The process logger: pino JSON lines with secrets removed before they are written.
// Two layers: pino's path redaction for well-known locations (headers, token fields),
// and a string scrubber that masks signed-URL query parameters and URL passwords
// wherever a string turns up (fields at any depth, the message, errors, requests).

import { hostname } from 'node:os';
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger } from 'pino';

/** What replaces a secret in a log line. */
export const redactedText = '[Redacted]';

/**
 * pino redaction paths: request headers that carry credentials, and token-like fields at
 * the top level or one level down. Deeper fields with these names are caught by the scrubber.
 */
export const redactPaths: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  ...[
    'authorization',
    'token',
    'access_token',
    'refresh_token',
    'id_token',
    'api_key',
    'apiKey',
    'password',
    'secret',
    'signature',
    'authJwtSecret',
    'metricsToken',
  ].flatMap((key) => [key, `*.${key}`]),
];

/** Object keys (compared lower-case) whose values are always replaced, at any depth. */
const secretKeys = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apikey',
  'password',
  'secret',
  'client_secret',
  'signature',
  'authjwtsecret',
  'previoussecret',
  'previous_secret',
  'webhook-signature',
]);

/** Query parameters that make a URL a bearer credential (signed downloads, tokens). */
const secretQuery = /([?&](?:sig|signature|token|access_token|api_key|apikey|x-amz-signature|x-amz-credential|x-goog-signature)=)[^&#\s"'<>]*/gi;
/** A webhook signing secret (`whsec_` and base64), wherever it turns up. */
const webhookSecret = /whsec_[A-Za-z0-9+/]+=*/g;
/** `scheme://user:password@` userinfo. */
const urlPassword = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]*@/gi;

/**
 * Returns `url` with signing query parameters (`sig`, `signature`, `token`, ...), any
 * userinfo password and any webhook secret (`whsec_...`) masked, leaving the rest readable. Works on a bare URL as well as on
 * text that merely contains URLs; a string without secrets comes back unchanged.
 */
export function redactUrl(url: string | URL): string {
  const text = String(url);
  if (!text.includes('=') && !text.includes('@') && !text.includes('whsec_')) return text;
  return text.replace(secretQuery, `$1${redactedText}`).replace(urlPassword, `$1${redactedText}@`).replace(webhookSecret, redactedText);
}

/**
 * Creates the JSON logger at `config.logLevel`, with `bindings` on every line (for example
 * `{ service: 'api' }`). `destination` defaults to stdout; tests pass a stream to capture output.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, bindings: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: { pid: process.pid, hostname: hostname(), ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...redactPaths], censor: redactedText },
    serializers: {
      err: (error: Error) => scrubOwn(stdSerializers.err(error)),
      req: (req: Parameters<typeof stdSerializers.req>[0]) => scrubOwn(stdSerializers.req(req)),
      res: stdSerializers.res,
      msg: (message: unknown) => (typeof message === 'string' ? redactUrl(message) : message),
    },
    formatters: {
      bindings: (fields: Record<string, unknown>) => scrub(fields, 0) as Record<string, unknown>,
      log: (object: Record<string, unknown>) => scrub(object, 0) as Record<string, unknown>,
    },
  };
  const logger = destination === undefined ? pino(options) : pino(options, destination);
  // pino formats only the root's bindings; children are created with `Object.create(parent)`,
  // so this override is inherited by every descendant and scrubs their bindings too.
  const child = logger.child;
  logger.child = function (this: Logger, fields: Record<string, unknown>, childOptions?: object) {
    return child.call(this, scrub(fields, 0) as Record<string, unknown>, childOptions);
  } as Logger['child'];
  return logger;
}

const maxDepth = 8;

/** Scrubs, in place, the own fields of an object a pino serializer has just built for us. */
function scrubOwn<T>(serialized: T): T {
  if (serialized === null || typeof serialized !== 'object') return scrub(serialized, 0) as T;
  const fields = serialized as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const item = fields[key];
    fields[key] = secretKeys.has(key.toLowerCase()) && item != null ? redactedText : scrub(item, 1);
  }
  return serialized;
}

/**
 * Copy-on-write scrub of plain objects and arrays: secret-named keys are replaced and
 * strings go through `redactUrl`. Class instances (errors, requests, buffers) are left to
 * pino's serializers; depth is bounded so cyclic data cannot loop.
 */
function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactUrl(value);
  if (value === null || typeof value !== 'object' || depth > maxDepth) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, index) => {
      const next = scrub(item, depth + 1);
      if (next !== item) (copy ??= [...value])[index] = next;
    });
    return copy ?? value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = secretKeys.has(key.toLowerCase()) && item != null ? redactedText : scrub(item, depth + 1);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}
