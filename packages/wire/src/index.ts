/**
 * The contract's messages in the domain's terms and in the spec's JSON: enum values to the
 * domain's spellings and back, the mint request, times and optional fields; and, derived from
 * any message's descriptor, its JSON Schema and its spec JSON form (snake_case fields, the
 * domain's enum spellings, ISO times, null for unset), which the /v1 surface and its OpenAPI use.
 */
export {
  enumMapping,
  specSpellings,
  activationMode,
  batchStatus,
  commercialStatus,
  decommissionReason,
  deliveryStatus,
  identityMode,
  importStatus,
  jobStatus,
  linkLevel,
  mintReadinessStatus,
  packFormat,
  packPurpose,
  packStatus,
  paper,
  passportAccessClass,
  passportLevel,
  productionBatchStatus,
  scanClientClass,
  scanGroupBy,
  serialAction,
  serialState,
  symbology,
  unitStatus,
  type EnumMapping,
} from './enums.ts';
export { messageOf } from './views.ts';
export {
  contractServices,
  declaredPermission,
  partnerAccessOf,
  operationAccessOf,
  rpcPermissions,
  sessionServices,
  brandPermissionOf,
  namedOperations,
  operationSchemaName,
  type DeclaredPermission,
  type NamedOperation,
} from './operations.ts';
export { mintRequestOf, layoutFromWire, toTimestamp, dateOrNull, orNull, orUnset } from './values.ts';
export { requestSchema, responseSchema, fromSpecJson, toSpecJson, wholeMessage, type ResponseShape } from './spec-json.ts';
export {
  ref,
  componentPointer,
  uuid,
  time,
  integer,
  boolean,
  string,
  text,
  nullable,
  obj,
  pick,
  arrayOf,
  oneOfEnum,
  type Schema,
} from './json-schema.ts';
