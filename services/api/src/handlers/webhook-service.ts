// WebhookService handlers: a brand's webhook endpoints, their secrets and deliveries.

import type { ServiceImpl } from '@connectrpc/connect';
import { WebhookService } from '@mint/contract';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { cursorOf, fromViews, pageOf } from './views.ts';
import { orNull } from '@mint/wire';

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
      const { endpoint, secret } = await useCases.createWebhookEndpoint(ctx, { id: principalOf(context).actorId }, webhooks, {
        brandId: req.brandId,
        url: req.url,
        eventTypes: req.eventTypes,
        description: req.description,
      });
      return { ok: true, endpoint: endpoint, secret };
    },

    async listWebhookEndpoints(req) {
      const page = await useCases.listWebhookEndpointsOf(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, ...pageOf('endpoints', page) };
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
      const page = await useCases.listWebhookDeliveriesOf(ctx, req.brandId, req.endpointId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, ...pageOf('deliveries', { ...page, items: page.items.map((d) => ({ ...d, lastResponseCode: d.lastStatusCode })) }) };
    },

    async redeliverWebhook(req) {
      await useCases.redeliverWebhook(ctx, req.brandId, req.deliveryId);
      return { ok: true };
    },
  });
}
