// Request validation against the contract's buf.validate rules, before any handler runs.

import { ScalarType, type DescMessage, type Message } from '@bufbuild/protobuf';
import { pathToString, reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { createValidator, violationsToProto, type Validator, type Violation } from '@bufbuild/protovalidate';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { checkEachRequest } from './stream.ts';

/**
 * Throws InvalidArgument when `message` breaks a rule of its schema. The error message names
 * every offending field (`requested_quantity: value must be ...; lots[0].qty: ...`) and the
 * error carries a `buf.validate.Violations` detail, as Connect's validate interceptors do. A
 * message that passes them but has a string holding U+0000 is refused too, naming the fields.
 * A rule that cannot be evaluated is a server fault and is rethrown as is (Internal).
 */
export function assertValidMessage(validator: Validator, schema: DescMessage, message: Message): void {
  const result = validator.validate(schema, message);
  if (result.kind === 'error') throw result.error;
  if (result.kind === 'invalid') {
    const [value, desc] = violationsToProto(result.violations);
    throw new ConnectError(describeViolations(result.violations), Code.InvalidArgument, undefined, [{ desc, value }]);
  }
  const withNul = nulCharacterFields(reflect(schema, message), '');
  if (withNul.length > 0)
    throw new ConnectError(withNul.map((path) => `${path}: must not contain the NUL character (U+0000)`).join('; '), Code.InvalidArgument);
}

/**
 * Paths (`sku`, `lots[0].lot_code`) of the set string fields that contain U+0000: protobuf allows
 * it, but PostgreSQL text cannot store or compare it, so such a value would fail in the database.
 */
function nulCharacterFields(message: ReflectMessage, prefix: string): string[] {
  const found: string[] = [];
  const hasNul = (value: unknown) => typeof value === 'string' && value.includes('\u0000');
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    const path = prefix + field.name;
    if (field.fieldKind === 'scalar') {
      if (field.scalar === ScalarType.STRING && hasNul(message.get(field))) found.push(path);
    } else if (field.fieldKind === 'message') {
      found.push(...nulCharacterFields(message.get(field), `${path}.`));
    } else if (field.fieldKind === 'list') {
      let i = 0;
      for (const item of message.get(field)) {
        if (field.listKind === 'message') found.push(...nulCharacterFields(item as ReflectMessage, `${path}[${i}].`));
        else if (hasNul(item)) found.push(`${path}[${i}]`);
        i++;
      }
    } else if (field.fieldKind === 'map') {
      for (const [key, value] of message.get(field)) {
        if (hasNul(key)) found.push(`${path}[${JSON.stringify(key)}]`);
        else if (field.mapKind === 'message') found.push(...nulCharacterFields(value as ReflectMessage, `${path}[${JSON.stringify(key)}].`));
        else if (hasNul(value)) found.push(`${path}[${JSON.stringify(key)}]`);
      }
    }
  }
  return found;
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
