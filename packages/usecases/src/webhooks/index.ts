export {
  createWebhookEndpoint,
  listWebhookEndpointsOf,
  updateWebhookEndpointOf,
  deleteWebhookEndpointOf,
  rotateWebhookSecret,
  listWebhookDeliveriesOf,
  redeliverWebhook,
  sealWebhookSecrets,
  type WebhookSettings,
  type WebhookEndpointView,
} from './webhooks.ts';
export { createWebhookSender, type WebhookSend, type WebhookNetworkPolicy } from './webhook-sender.ts';
export {
  claimWebhooks,
  deliverWebhook,
  webhookBacklog,
  fanOutWebhookEvents,
  drainWebhookFanout,
  defaultWebhookFanout,
  type WebhookFanoutOptions,
  type WebhookFanoutPass,
} from './webhook-delivery.ts';
