// The application's Connect services, wired to the use cases.

import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import {
  AccountService,
  CatalogService,
  MintService,
  PassportService,
  ResolverService,
  ScanService,
  WebhookService,
  WorkspaceService,
  PartnerService,
} from '@mint/contract';
import { createAccountServiceHandlers } from './handlers/account-service.ts';
import { createCatalogServiceHandlers } from './handlers/catalog-service.ts';
import { createMintServiceHandlers, type MintServiceDeps } from './handlers/mint-service.ts';
import { createResolverServiceHandlers, type ResolverServiceDeps } from './handlers/resolver-service.ts';
import { createPartnerServiceHandlers } from './handlers/partner-service.ts';
import { createPassportServiceHandlers, type PassportServiceDeps } from './handlers/passport-service.ts';
import { createScanServiceHandlers, type ScanServiceDeps } from './handlers/scan-service.ts';
import { createWebhookServiceHandlers, type WebhookServiceDeps } from './handlers/webhook-service.ts';
import { createWorkspaceServiceHandlers } from './handlers/workspace-service.ts';

/** What {@link createConnectRoutes} wires: what each service's handlers need (WebhookService's URL rules https only when absent). */
export type ConnectRoutesDeps = MintServiceDeps & ResolverServiceDeps & ScanServiceDeps & PassportServiceDeps & Partial<WebhookServiceDeps>;

/** One Connect service with its implementation. */
export interface ServiceRegistration {
  readonly service: DescService;
  readonly impl: Partial<ServiceImpl<DescService>>;
}

/**
 * The implementations of MintService, CatalogService, ResolverService, WebhookService, ScanService,
 * PassportService, PartnerService, AccountService and WorkspaceService on `deps`: registered on the Connect router, and called by the /v1 named
 * operations (built once per process, so both surfaces share them).
 */
export function createServices(deps: ConnectRoutesDeps): readonly ServiceRegistration[] {
  const registration = <S extends DescService>(service: S, impl: ServiceImpl<S>): ServiceRegistration => ({
    service,
    impl: impl as Partial<ServiceImpl<DescService>>,
  });
  return [
    registration(MintService, createMintServiceHandlers(deps)),
    registration(CatalogService, createCatalogServiceHandlers(deps)),
    registration(ResolverService, createResolverServiceHandlers(deps)),
    registration(WebhookService, createWebhookServiceHandlers({ ...deps, webhooks: deps.webhooks ?? { allowLoopback: false } })),
    registration(ScanService, createScanServiceHandlers(deps)),
    registration(PassportService, createPassportServiceHandlers(deps)),
    registration(PartnerService, createPartnerServiceHandlers(deps)),
    registration(AccountService, createAccountServiceHandlers(deps)),
    registration(WorkspaceService, createWorkspaceServiceHandlers(deps)),
  ];
}

/** Registers `services` (by default {@link createServices} on `deps`); pass the result as `createApiServer({ routes })`. */
export function createConnectRoutes(deps: ConnectRoutesDeps, services: readonly ServiceRegistration[] = createServices(deps)): (router: ConnectRouter) => void {
  return (router) => {
    for (const { service, impl } of services) router.service(service, impl);
  };
}
