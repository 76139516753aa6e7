// Request validation against the contract's buf.validate rules, before any handler runs.

import type { DescMessage, Message } from '@bufbuild/protobuf';
import { pathToString } from '@bufbuild/protobuf/reflect';
import { createValidator, violationsToProto, type Validator, type Violation } from '@bufbuild/protovalidate';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { checkEachRequest } from './stream.ts';

/**
 * Throws InvalidArgument when `message` breaks a rule of its schema. The error message names
 * every offending field (`requested_quantity: value must be ...; lots[0].qty: ...`) and the
 * error carries a `buf.validate.Violations` detail, as Connect's validate interceptors do.
 * A rule that cannot be evaluated is a server fault and is rethrown as is (Internal).
 */
export function assertValidMessage(validator: Validator, schema: DescMessage, message: Message): void {
  const result = validator.validate(schema, message);
  if (result.kind === 'valid') return;
  if (result.kind === 'error') throw result.error;
  const [value, desc] = violationsToProto(result.violations);
  throw new ConnectError(describeViolations(result.violations), Code.InvalidArgument, undefined, [{ desc, value }]);
}

/** `field: message` for each violation, joined with `; ` (fields by their proto names, e.g. `lots[2].qty`). */
export function describeViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) => {
      const field = pathToString(v.field);
      return field === '' ? v.message : `${field}: ${v.message}`;
    })
    .join('; ');
}

/**
 * Validates every request message (the single request of unary and server-streaming calls, each
 * message of client streams) before the handler sees it.
 */
export function validationInterceptor(validator: Validator = createValidator()): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      assertValidMessage(validator, req.method.input, req.message);
      return next(req);
    }
    return next(checkEachRequest(req, (message) => assertValidMessage(validator, req.method.input, message)));
  };
}
