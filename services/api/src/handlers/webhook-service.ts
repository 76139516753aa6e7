// WebhookService handlers: a brand's webhook endpoints, their secrets and deliveries.

import type { ServiceImpl } from '@connectrpc/connect';
import { WebhookService } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews, pageOf, pageRequest } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the WebhookService handlers need. */
export interface WebhookServiceDeps extends HandlerDeps {
  /** Endpoint URL rules (`WEBHOOK_ALLOW_LOOPBACK`). */
  readonly webhooks: UseCases.WebhookSettings;
}

/** The WebhookService implementation; deliveries are sent by the executor. */
export function createWebhookServiceHandlers(deps: WebhookServiceDeps): ServiceImpl<typeof WebhookService> {
  const { ctx, useCases, webhooks } = deps;
  return fromViews(WebhookService, {
    async createWebhookEndpoint(req, context) {
      return { ...(await useCases.createWebhookEndpoint(ctx, { id: principalOf(context).actorId }, webhooks, valuesOf(req))), ok: true };
    },

    async listWebhookEndpoints(req) {
      const page = await useCases.listWebhookEndpointsOf(ctx, req.brandId, pageRequest(valuesOf(req)));
      return { ok: true, endpoints: page.items, ...pageOf(page) };
    },

    async updateWebhookEndpoint(req, context) {
      const endpoint = await useCases.updateWebhookEndpointOf(ctx, { id: principalOf(context).actorId }, webhooks, {
        brandId: req.brandId,
        endpointId: req.endpointId,
        url: req.url,
        description: req.description,
        enabled: req.enabled,
        eventTypes: req.replaceEventTypes || req.eventTypes.length > 0 ? req.eventTypes : undefined,
      });
      return { ok: true, endpoint: endpoint };
    },

    async deleteWebhookEndpoint(req, context) {
      await useCases.deleteWebhookEndpointOf(ctx, { id: principalOf(context).actorId }, req.brandId, req.endpointId);
      return { ok: true };
    },

    async rotateWebhookSecret(req, context) {
      const { endpoint, secret } = await useCases.rotateWebhookSecret(ctx, { id: principalOf(context).actorId }, req.brandId, req.endpointId);
      return { ok: true, endpoint: endpoint, secret };
    },

    async listWebhookDeliveries(req) {
      const page = await useCases.listWebhookDeliveriesOf(ctx, req.brandId, req.endpointId, pageRequest(valuesOf(req)));
      return { ok: true, deliveries: page.items.map((d) => ({ ...d, lastResponseCode: d.lastStatusCode })), ...pageOf(page) };
    },

    async redeliverWebhook(req) {
      await useCases.redeliverWebhook(ctx, req.brandId, req.deliveryId);
      return { ok: true };
    },
  });
}
