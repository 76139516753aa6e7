// The application's Connect services, wired to the use cases.

import type { ConnectRouter } from '@connectrpc/connect';
import { AccountService, CatalogService, MintService, PassportService, ResolverService, ScanService, WebhookService } from '@mint/contract';
import type { ReservedHosts } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { createAccountServiceHandlers, type AccountUseCases } from './handlers/account-service.ts';
import { createCatalogServiceHandlers, type CatalogUseCases } from './handlers/catalog-service.ts';
import { createMintServiceHandlers, type MintUseCases, type WatchLimits } from './handlers/mint-service.ts';
import { createResolverServiceHandlers, type ResolverUseCases } from './handlers/resolver-service.ts';
import { createPassportServiceHandlers, type PassportUseCases } from './handlers/passport-service.ts';
import { createScanServiceHandlers, type ScanUseCases } from './handlers/scan-service.ts';
import { createWebhookServiceHandlers, type WebhookUseCases } from './handlers/webhook-service.ts';

/** What {@link createConnectRoutes} wires. */
export interface ConnectRoutesDeps {
  readonly ctx: UseCases.UseCaseContext;
  /** The use-case functions; `@mint/usecases` itself in production. */
  readonly useCases: MintUseCases & CatalogUseCases & ResolverUseCases & WebhookUseCases & AccountUseCases & ScanUseCases & PassportUseCases;
  /** Endpoint URL rules of WebhookService; https only when absent. */
  readonly webhooks?: UseCases.WebhookSettings;
  /** Serve SetMintBatchStatus (off by default). */
  readonly setMintBatchStatusEnabled?: boolean;
  /** Signed pack downloads (keys and store); CreatePayloadPackDownloadUrl answers Unimplemented without them. */
  readonly downloads?: UseCases.DownloadSettings;
  /** Limits of WatchMintJob streams; the defaults when absent. */
  readonly watch?: WatchLimits;
  /** Hosts no brand may claim as its resolver domain; only the public host when absent. */
  readonly reservedHosts?: ReservedHosts;
  /** The process's scan rules, fed with each ingested batch; none when absent. */
  readonly scanAlerts?: UseCases.ScanAlerts;
  /** The resolver's cached passports, forgotten for a product this process publishes; none when absent. */
  readonly passportReads?: UseCases.PassportReads;
}

/** Registers MintService, CatalogService, ResolverService, WebhookService, ScanService, PassportService and AccountService; pass the result as `createApiServer({ routes })`. */
export function createConnectRoutes(deps: ConnectRoutesDeps): (router: ConnectRouter) => void {
  return (router) => {
    router.service(MintService, createMintServiceHandlers(deps));
    router.service(CatalogService, createCatalogServiceHandlers(deps));
    router.service(ResolverService, createResolverServiceHandlers(deps));
    router.service(WebhookService, createWebhookServiceHandlers({ ...deps, webhooks: deps.webhooks ?? { allowLoopback: false } }));
    router.service(ScanService, createScanServiceHandlers(deps));
    router.service(PassportService, createPassportServiceHandlers(deps));
    router.service(AccountService, createAccountServiceHandlers(deps));
  };
}
