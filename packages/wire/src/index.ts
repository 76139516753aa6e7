/**
 * The contract's messages in the domain's terms and in the spec's JSON: enum values to the
 * domain's spellings and back; derived from any message's descriptor, a request's values as the
 * use cases take them, a view as a message, its JSON Schema and its spec JSON form (snake_case
 * fields, the domain's enum spellings, ISO times, null for unset), which the /v1 surface and its
 * OpenAPI use.
 */
export {
  enumMapping,
  enumMappings,
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
export { valuesOf, mintRequestOf, type ValuesOf, type DomainEnums } from './requests.ts';
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
