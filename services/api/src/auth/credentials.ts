// Credentials as a request carries them: `Authorization: Bearer` and `x-api-key`, from Fetch
// Headers (Connect) or Node's headers (plain HTTP). Whether they grant anything is the use
// cases' rule (`authenticate`, `authorizeCaller` in @mint/usecases).

import type { IncomingHttpHeaders } from 'node:http';
import { UnauthenticatedError } from '@mint/domain';
import type { Credentials } from '@mint/usecases';

function headerValue(headers: Headers | IncomingHttpHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const value = (headers as IncomingHttpHeaders)[name];
  if (Array.isArray(value)) {
    if (value.length > 1) throw new UnauthenticatedError(`the ${name} header must be given once`);
    return value[0] ?? null;
  }
  return value ?? null;
}

/**
 * Reads `Authorization: Bearer <t>` and `x-api-key` from Fetch Headers or Node IncomingHttpHeaders; a malformed Authorization header throws UnauthenticatedError (domain).
 * An empty header counts as absent; the credential values never appear in an error message.
 */
export function credentialsFrom(headers: Headers | IncomingHttpHeaders): Credentials {
  const authorization = headerValue(headers, 'authorization');
  const apiKey = headerValue(headers, 'x-api-key');
  let bearer: string | null = null;
  if (authorization !== null && authorization.trim() !== '') {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization.trim());
    if (match === null) throw new UnauthenticatedError('the Authorization header must be "Bearer <token>"');
    bearer = match[1]!;
  }
  return { bearer, apiKey: apiKey === null || apiKey.trim() === '' ? null : apiKey.trim() };
}
