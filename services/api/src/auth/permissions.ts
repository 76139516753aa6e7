// Which permission each RPC needs on the brand named by its request's brand_id. One table per
// service, keyed by the RPC's method name (its local, lowerCamel form in the generated code), so
// the compiler rejects a service whose table misses a method; a test checks the descriptors too.

import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { AccountService, CatalogService, MintService, PassportService, ResolverService, ScanService, WebhookService } from '@mint/contract';
import type { Permission } from '@mint/domain';
import { publicRpcServices } from './public-paths.ts';

type PermissionTable<S extends DescService> = { readonly [M in keyof S['method']]: Permission };

/** MintService: writes (asking for a pack too: it spends executor time and moves the batch to exported) need mint:write; reads, the job watch and pack downloads need mint:read. */
export const mintServicePermissions: PermissionTable<typeof MintService> = {
  submitMintRequest: 'mint:write',
  preflightMintBatch: 'mint:write',
  createMintBatchFromJob: 'mint:write',
  processMintJobBatch: 'mint:write',
  setMintBatchStatus: 'mint:write',
  activateMintUnits: 'mint:write',
  createPayloadPack: 'mint:write',
  listMintBatches: 'mint:read',
  getMintBatch: 'mint:read',
  getMintJob: 'mint:read',
  listMintUnits: 'mint:read',
  listMintEvents: 'mint:read',
  getMintKpis: 'mint:read',
  listPayloadPacks: 'mint:read',
  createPayloadPackDownloadUrl: 'mint:read',
  watchMintJob: 'mint:read',
};

/** CatalogService: changes need products:write, reads need products:read. */
export const catalogServicePermissions: PermissionTable<typeof CatalogService> = {
  upsertProduct: 'products:write',
  upsertProductionBatch: 'products:write',
  startProductImport: 'products:write',
  getProduct: 'products:read',
  listProducts: 'products:read',
  getProductImport: 'products:read',
};

/**
 * ResolverService: link changes and imports need links:write, reads need links:read; the brand's
 * resolver domain needs workspace:admin (owners only, never an API key).
 */
export const resolverServicePermissions: PermissionTable<typeof ResolverService> = {
  upsertLink: 'links:write',
  deleteLink: 'links:write',
  replaceLinks: 'links:write',
  startLinkImport: 'links:write',
  listLinks: 'links:read',
  getLinkImport: 'links:read',
  setBrandResolverDomain: 'workspace:admin',
};

/** WebhookService: everything needs webhooks:write (owner and admin; secrets and receivers are the brand's to manage). */
export const webhookServicePermissions: PermissionTable<typeof WebhookService> = {
  createWebhookEndpoint: 'webhooks:write',
  listWebhookEndpoints: 'webhooks:write',
  updateWebhookEndpoint: 'webhooks:write',
  deleteWebhookEndpoint: 'webhooks:write',
  rotateWebhookSecret: 'webhooks:write',
  listWebhookDeliveries: 'webhooks:write',
  redeliverWebhook: 'webhooks:write',
};

/**
 * ScanService: an edge's ingest needs scans:write (a key of its own for edges and log shippers); the
 * reads and the alert settings need scans:read; changing the settings and clearing a suspect unit
 * need scans:manage (owner and admin: an edge's key must not silence the rules).
 */
export const scanServicePermissions: PermissionTable<typeof ScanService> = {
  recordScanEvents: 'scans:write',
  getScanStats: 'scans:read',
  getUnitScans: 'scans:read',
  getScanAlertSettings: 'scans:read',
  updateScanAlertSettings: 'scans:manage',
  clearSuspectUnit: 'scans:manage',
};

/**
 * PassportService: passports are product data, read with products:read and edited, imported and
 * published with products:write; credentials that read restricted sections are the workspace's
 * to hand out (workspace:admin, as API keys are).
 */
export const passportServicePermissions: PermissionTable<typeof PassportService> = {
  getPassport: 'products:read',
  listPassportVersions: 'products:read',
  getPassportVersion: 'products:read',
  updatePassportDraft: 'products:write',
  publishPassport: 'products:write',
  importPassports: 'products:write',
  issuePassportAccessKey: 'workspace:admin',
  revokePassportAccessKey: 'workspace:admin',
  listPassportAccessKeys: 'workspace:admin',
};

/** Every protected service with its table, by fully qualified service name. */
export const rpcPermissions: ReadonlyMap<string, Readonly<Record<string, Permission>>> = new Map<string, Readonly<Record<string, Permission>>>([
  [MintService.typeName, mintServicePermissions],
  [CatalogService.typeName, catalogServicePermissions],
  [ResolverService.typeName, resolverServicePermissions],
  [WebhookService.typeName, webhookServicePermissions],
  [ScanService.typeName, scanServicePermissions],
  [PassportService.typeName, passportServicePermissions],
]);

/**
 * Services about the caller's own account, naming no brand (AccountService): any verified session
 * may call them, and the use case answers for the session's user alone (an API key alone is refused there).
 */
export const sessionServices: ReadonlySet<string> = new Set([AccountService.typeName]);

/** Services anyone may call without credentials: the allow-list of ./public-paths.ts. */
export const publicServices: ReadonlySet<string> = new Set(publicRpcServices);

/**
 * gRPC server reflection (both versions): it describes the contract, no brand's data, so any valid
 * credentials may call it, or anyone when `REFLECTION_ALLOW_ANONYMOUS` is set.
 */
export const reflectionServices: ReadonlySet<string> = new Set(['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);

/** Access settings that change what {@link permissionFor} answers. */
export interface AccessOptions {
  /** Serve reflection without credentials (`REFLECTION_ALLOW_ANONYMOUS`); default false. */
  readonly anonymousReflection?: boolean;
}

/**
 * The permission `method` needs, `'public'` for a method of a public service, `'authenticated'`
 * for one any verified caller may use without naming a brand (the account services and
 * reflection), or undefined when the method has no entry (the auth interceptor then refuses the
 * call: deny by default).
 */
export function permissionFor(method: DescMethod, options: AccessOptions = {}): Permission | 'public' | 'authenticated' | undefined {
  if (publicServices.has(method.parent.typeName)) return 'public';
  if (reflectionServices.has(method.parent.typeName)) return options.anonymousReflection === true ? 'public' : 'authenticated';
  if (sessionServices.has(method.parent.typeName)) return 'authenticated';
  const table = rpcPermissions.get(method.parent.typeName);
  return table === undefined || !Object.hasOwn(table, method.localName) ? undefined : table[method.localName];
}
