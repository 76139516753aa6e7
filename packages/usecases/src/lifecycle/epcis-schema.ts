// The EPCIS 2.0 JSON Schema check of captured documents: GS1's schema (draft-07, vendored in
// epcis-2.0/ with its provenance), compiled once on first use with ajv and ajv-formats, so a
// document is checked exactly as the tests check the events the service writes. Capture checks
// off the caller's event loop, on a small pool of worker threads (piscina; the worker is
// epcis-schema-worker.ts): a 16 MiB document takes seconds to check, and the API answers other
// requests meanwhile.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Piscina } from 'piscina';
import type { FieldViolation } from '@mint/domain';

/** Most schema problems one refusal names. */
export const maxSchemaViolations = 10;

let compiled: ValidateFunction | null = null;

function validator(): ValidateFunction {
  if (compiled === null) {
    const schema = JSON.parse(readFileSync(new URL('./epcis-2.0/EPCIS-JSON-Schema.json', import.meta.url), 'utf8')) as object;
    const ajv = new Ajv({ strict: false, allErrors: true });
    // ajv-formats is CommonJS: its default export is the plugin function at run time.
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    compiled = ajv.compile(schema);
  }
  return compiled;
}

/**
 * Worker threads that check documents: at most two, and one fewer than the machine's cores (a
 * check is CPU-bound; the event loop keeps a core). Started on first use, each compiling the
 * schema once; an idle thread ends after a minute (and never keeps the process alive).
 */
let pool: Piscina<unknown, FieldViolation[]> | null = null;
const poolThreads = Math.max(1, Math.min(2, availableParallelism() - 1));

/**
 * {@link epcisSchemaViolations} on a worker thread: the same problems, while the caller's event loop
 * goes on (the document is copied to the thread).
 */
export async function epcisSchemaViolationsOffLoop(document: unknown): Promise<FieldViolation[]> {
  pool ??= new Piscina<unknown, FieldViolation[]>({
    filename: new URL('./epcis-schema-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: poolThreads,
    idleTimeout: 60_000,
  });
  return pool.run(document);
}

/** Keywords that only summarise the errors of their branches. */
const summaries = new Set(['if', 'anyOf', 'oneOf', 'allOf', 'not', 'then', 'else']);

/** `/a/b` + `c` as a JSON pointer (RFC 6901). */
const pointer = (path: string, child: string) => `${path}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The problems of `document` against the EPCIS 2.0 JSON Schema, each named by its JSON pointer in
 * the document (`/epcisBody/eventList/0/eventTime`; `''` is the document itself) with a plain
 * message, at most {@link maxSchemaViolations}, the most specific first; empty when it is valid.
 * An unknown field is named by its own pointer; the alternatives of one value (a CBV name or a
 * URI) are reported as one message.
 */
export function epcisSchemaViolations(document: unknown): FieldViolation[] {
  const validate = validator();
  if (validate(document)) return [];
  const errors = (validate.errors ?? []).filter((e) => !summaries.has(e.keyword));
  // An unknown field: the schema checks property names (an EPCIS field, or an extension named by a
  // URI or prefix); the branch errors of that check say nothing more.
  const unknownFields = errors.filter((e) => e.keyword === 'propertyNames');
  const byPath = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    if (e.keyword === 'propertyNames' || e.schemaPath.includes('/propertyNames/')) continue;
    const path = e.keyword === 'required' ? pointer(e.instancePath, String(e.params['missingProperty'])) : e.instancePath;
    byPath.set(path, [...(byPath.get(path) ?? []), e]);
  }
  const paths = [...byPath.keys()];
  const violations: FieldViolation[] = unknownFields.map((e) => ({
    field: pointer(e.instancePath, String(e.params['propertyName'])),
    message: 'is not an EPCIS 2.0 field (an extension field is named by a URI or a declared prefix, such as example:myField)',
  }));
  for (const [path, list] of byPath) {
    // A required field missing in one branch of an anyOf (epcList or quantityList, …) is noise when a
    // value below the same object is wrong: that value is the problem.
    const inAlternative = list.every((e) => e.keyword === 'required' && e.schemaPath.includes('/anyOf/'));
    const parent = list[0]!.instancePath;
    if (inAlternative && paths.some((p) => p !== path && p.startsWith(`${parent}/`) && byPath.get(p)!.some((e) => e.keyword !== 'required'))) continue;
    violations.push({ field: path, message: messageOf(list) });
  }
  const depth = (field: string) => field.split('/').length;
  return violations.sort((a, b) => depth(b.field) - depth(a.field)).slice(0, maxSchemaViolations);
}

/** One message for the errors of one value: alternatives joined with "or". */
function messageOf(list: readonly ErrorObject[]): string {
  const parts: string[] = [];
  const enums = list.filter((e) => e.keyword === 'enum');
  for (const e of list) {
    let part: string;
    switch (e.keyword) {
      case 'required':
        part = 'is required';
        break;
      case 'format':
        part =
          e.params['format'] === 'date-time'
            ? 'must be an RFC 3339 date-time with a time zone offset'
            : `must be a ${String(e.params['format']).toUpperCase()}`;
        break;
      case 'enum':
        part = `must be one of ${(e.params['allowedValues'] as unknown[]).join(', ')}`;
        break;
      case 'const':
        part = `must be ${JSON.stringify(e.params['allowedValue'])}`;
        break;
      // An action's per-type patterns repeat its enum.
      case 'pattern':
        if (enums.length > 0) continue;
        part = `must match ${String(e.params['pattern'])}`;
        break;
      default:
        part = e.message ?? `fails ${e.keyword}`;
    }
    if (!parts.includes(part)) parts.push(part);
  }
  return parts.join(', or ');
}
