// Declarations of index.js (the generated ./gen files carry their own).
import type { Client, Interceptor, Transport } from '@connectrpc/connect';
import type { AccountService } from './gen/mint/v1/account_service_pb.js';
import type { CatalogService } from './gen/mint/v1/catalog_service_pb.js';
import type { MintService } from './gen/mint/v1/mint_service_pb.js';
import type { ResolverService } from './gen/mint/v1/resolver_service_pb.js';
import type { WebhookService } from './gen/mint/v1/webhook_service_pb.js';
import type { ScanService } from './gen/mint/v1/scan_service_pb.js';
import type { PassportService } from './gen/mint/v1/passport_service_pb.js';
import type { PartnerService } from './gen/mint/v1/partner_service_pb.js';
import type { WorkspaceService } from './gen/mint/v1/workspace_service_pb.js';

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

/** Where and as whom the clients call. */
export interface MintClientOptions {
  /** The API's origin, e.g. `http://localhost:8080`; required unless `transport` is given. */
  readonly baseUrl?: string;
  /** A session token (JWT), sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** A workspace API key (`mk_...`), sent as `x-api-key`. */
  readonly apiKey?: string;
  /** Protobuf binary instead of JSON on the wire. */
  readonly binary?: boolean;
  /** The fetch to use (the global one by default). */
  readonly fetch?: typeof globalThis.fetch;
  /** More interceptors, run after the credentials one. */
  readonly interceptors?: readonly Interceptor[];
  /** A transport of your own (e.g. gRPC over HTTP/2 from @connectrpc/connect-node); credentials are then yours to add. */
  readonly transport?: Transport;
}

/** Clients of every mint.v1 service on one transport. */
export interface MintClient {
  readonly transport: Transport;
  readonly mint: Client<typeof MintService>;
  readonly catalog: Client<typeof CatalogService>;
  readonly resolver: Client<typeof ResolverService>;
  readonly webhooks: Client<typeof WebhookService>;
  readonly scans: Client<typeof ScanService>;
  readonly passports: Client<typeof PassportService>;
  readonly partners: Client<typeof PartnerService>;
  readonly account: Client<typeof AccountService>;
  readonly workspace: Client<typeof WorkspaceService>;
}

/** An interceptor adding `Authorization: Bearer <token>` and `x-api-key`, each only when given. */
export declare function credentialsInterceptor(credentials: { readonly token?: string; readonly apiKey?: string }): Interceptor;

/** Clients of every mint.v1 service: by default the Connect protocol with JSON over fetch, at `baseUrl`, with the credentials given. */
export declare function createMintClient(options: MintClientOptions): MintClient;
