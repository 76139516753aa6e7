// WebhookService handlers: a brand's webhook endpoints, their secrets and deliveries.

import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { WebhookService, WebhookDeliverySchema, WebhookEndpointSchema } from '@mint/contract';
import { decodeCursor, encodeCursor } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { deliveryStatus, orNull, orUnset, toTimestamp } from './wire.ts';

/** The use cases WebhookService calls. */
export type WebhookUseCases = Pick<
  typeof UseCases,
  | 'createWebhookEndpoint'
  | 'listWebhookEndpointsOf'
  | 'updateWebhookEndpointOf'
  | 'deleteWebhookEndpointOf'
  | 'rotateWebhookSecret'
  | 'listWebhookDeliveriesOf'
  | 'redeliverWebhook'
>;

/** What the WebhookService handlers need. */
export interface WebhookServiceDeps extends HandlerDeps<WebhookUseCases> {
  /** Endpoint URL rules (`WEBHOOK_ALLOW_LOOPBACK`). */
  readonly webhooks: UseCases.WebhookSettings;
}

/** The WebhookService implementation; deliveries are sent by the executor. */
export function createWebhookServiceHandlers(deps: WebhookServiceDeps): ServiceImpl<typeof WebhookService> {
  const { ctx, useCases, webhooks } = deps;
  return {
    async createWebhookEndpoint(req, context) {
      const { endpoint, secret } = await useCases.createWebhookEndpoint(ctx, { id: principalOf(context).actorId }, webhooks, {
        brandId: req.brandId,
        url: req.url,
        eventTypes: req.eventTypes,
        description: req.description,
      });
      return { ok: true, endpoint: toWireEndpoint(endpoint), secret };
    },

    async listWebhookEndpoints(req) {
      const cursor = req.cursor === undefined || req.cursor === '' ? null : decodeCursor(req.cursor, 'cursor');
      const page = await useCases.listWebhookEndpointsOf(ctx, req.brandId, { limit: orNull(req.limit), cursor });
      return {
        ok: true,
        endpoints: page.items.map(toWireEndpoint),
        hasMore: page.hasMore,
        nextCursor: page.next === null ? undefined : encodeCursor(page.next),
      };
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
      return { ok: true, endpoint: toWireEndpoint(endpoint) };
    },

    async deleteWebhookEndpoint(req, context) {
      await useCases.deleteWebhookEndpointOf(ctx, { id: principalOf(context).actorId }, req.brandId, req.endpointId);
      return { ok: true };
    },

    async rotateWebhookSecret(req, context) {
      const { endpoint, secret } = await useCases.rotateWebhookSecret(ctx, { id: principalOf(context).actorId }, req.brandId, req.endpointId);
      return { ok: true, endpoint: toWireEndpoint(endpoint), secret };
    },

    async listWebhookDeliveries(req) {
      const cursor = req.cursor === undefined || req.cursor === '' ? null : decodeCursor(req.cursor, 'cursor');
      const page = await useCases.listWebhookDeliveriesOf(ctx, req.brandId, req.endpointId, { limit: orNull(req.limit), cursor });
      return {
        ok: true,
        deliveries: page.items.map(
          (d): MessageInitShape<typeof WebhookDeliverySchema> => ({
            id: d.id,
            endpointId: d.endpointId,
            eventId: d.eventId,
            eventType: d.eventType,
            status: deliveryStatus.toWire(d.status),
            attempts: d.attempts,
            nextAttemptAt: toTimestamp(d.nextAttemptAt),
            lastResponseCode: orUnset(d.lastStatusCode),
            lastDurationMs: orUnset(d.lastDurationMs),
            lastError: orUnset(d.lastError),
            deliveredAt: d.deliveredAt === null ? undefined : toTimestamp(d.deliveredAt),
            createdAt: toTimestamp(d.createdAt),
          }),
        ),
        hasMore: page.hasMore,
        nextCursor: page.next === null ? undefined : encodeCursor(page.next),
      };
    },

    async redeliverWebhook(req) {
      await useCases.redeliverWebhook(ctx, req.brandId, req.deliveryId);
      return { ok: true };
    },
  };
}

function toWireEndpoint(e: UseCases.WebhookEndpointView): MessageInitShape<typeof WebhookEndpointSchema> {
  return {
    id: e.id,
    brandId: e.brandId,
    url: e.url,
    description: e.description,
    eventTypes: [...e.eventTypes],
    enabled: e.enabled,
    disabledReason: orUnset(e.disabledReason),
    previousSecretExpiresAt: e.previousSecretExpiresAt === null ? undefined : toTimestamp(e.previousSecretExpiresAt),
    consecutiveFailures: e.consecutiveFailures,
    pausedUntil: e.pausedUntil === null ? undefined : toTimestamp(e.pausedUntil),
    createdAt: toTimestamp(e.createdAt),
    updatedAt: toTimestamp(e.updatedAt),
  };
}
