// @mint/client: the minting service's typed clients. The messages, enums and service descriptors
// under ./gen are generated from proto/mint/v1 (`npm run generate` in the repository); this file
// only wires them to a Connect transport with the service's credentials. Plain JavaScript with
// declarations beside it (index.d.ts), so it runs as published, in Node and in browsers.

import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { AccountService } from './gen/mint/v1/account_service_pb.js';
import { CatalogService } from './gen/mint/v1/catalog_service_pb.js';
import { MintService } from './gen/mint/v1/mint_service_pb.js';
import { ResolverService } from './gen/mint/v1/resolver_service_pb.js';
import { WebhookService } from './gen/mint/v1/webhook_service_pb.js';
import { ScanService } from './gen/mint/v1/scan_service_pb.js';
import { PassportService } from './gen/mint/v1/passport_service_pb.js';
import { PartnerService } from './gen/mint/v1/partner_service_pb.js';
import { WorkspaceService } from './gen/mint/v1/workspace_service_pb.js';

export * from './gen/mint/v1/common_pb.js';
export * from './gen/mint/v1/mint_service_pb.js';
export * from './gen/mint/v1/containers_pb.js';
export * from './gen/mint/v1/catalog_service_pb.js';
export * from './gen/mint/v1/resolver_service_pb.js';
export * from './gen/mint/v1/webhook_service_pb.js';
export * from './gen/mint/v1/account_service_pb.js';
export * from './gen/mint/v1/scan_service_pb.js';
export * from './gen/mint/v1/passport_service_pb.js';
export * from './gen/mint/v1/partner_service_pb.js';
export * from './gen/mint/v1/workspace_service_pb.js';

/**
 * An interceptor adding the credentials to every call: `Authorization: Bearer <token>` and
 * `x-api-key`, each only when given.
 * @param {{ token?: string, apiKey?: string }} credentials
 */
export function credentialsInterceptor(credentials) {
  return (next) => async (req) => {
    if (credentials.token) req.header.set('Authorization', `Bearer ${credentials.token}`);
    if (credentials.apiKey) req.header.set('x-api-key', credentials.apiKey);
    return next(req);
  };
}

/**
 * Clients of every mint.v1 service on one transport: by default the Connect protocol with JSON
 * over fetch (Node 18+ and browsers), at `baseUrl`, sending the credentials given.
 * @param {import('./index.d.ts').MintClientOptions} options
 */
export function createMintClient(options) {
  if (!options || (typeof options.baseUrl !== 'string' && options.transport === undefined)) {
    throw new TypeError('createMintClient needs baseUrl (e.g. "http://localhost:8080") or a transport');
  }
  const transport =
    options.transport ??
    createConnectTransport({
      baseUrl: options.baseUrl,
      useBinaryFormat: options.binary ?? false,
      fetch: options.fetch,
      interceptors: [credentialsInterceptor(options), ...(options.interceptors ?? [])],
    });
  return {
    transport,
    mint: createClient(MintService, transport),
    catalog: createClient(CatalogService, transport),
    resolver: createClient(ResolverService, transport),
    webhooks: createClient(WebhookService, transport),
    scans: createClient(ScanService, transport),
    passports: createClient(PassportService, transport),
    partners: createClient(PartnerService, transport),
    account: createClient(AccountService, transport),
    workspace: createClient(WorkspaceService, transport),
  };
}
