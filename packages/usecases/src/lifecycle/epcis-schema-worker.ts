// The worker thread of epcisSchemaViolationsOffLoop (epcis-schema.ts): checks one captured
// document against the EPCIS 2.0 JSON Schema per task, the schema compiled once per thread.

import type { FieldViolation } from '@mint/domain';
import { epcisSchemaViolations } from './epcis-schema.ts';

export default function check(document: unknown): FieldViolation[] {
  return epcisSchemaViolations(document);
}
