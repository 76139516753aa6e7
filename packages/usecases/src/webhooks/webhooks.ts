import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import {
  appendEvents,
  countWebhookEndpointsLocked,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  listWebhookSecretsToSeal,
  replaceWebhookSecrets,
  requeueWebhookDelivery,
  resumeWebhookDeliveries,
  updateWebhookEndpoint,
  type WebhookDeliveryRecord,
  type WebhookEndpointChange,
  type WebhookEndpointRecord,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  assertValid,
  generateWebhookSecret,
  IllegalStateError,
  isLoopbackHost,
  isSecretBoxError,
  isUuid,
  NotFoundError,
  openSecret,
  resolvePageSize,
  sealSecret,
  toPage,
  webhookEventTypeViolations,
  webhookSecretOverlapMs,
  webhookUrlViolations,
  type Cursor,
  type FieldViolation,
  type NewEvent,
  type Page,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { addressAllowList, addressRefusal } from './webhook-sender.ts';

/** Settings of the endpoint use cases. */
export interface WebhookSettings {
  /** Accept `http://` URLs of loopback hosts (dev mode and tests; `WEBHOOK_ALLOW_LOOPBACK`). */
  readonly allowLoopback: boolean;
  /** Private addresses or CIDR ranges an endpoint may name although private (`WEBHOOK_ALLOWED_ADDRESSES`); none when absent. */
  readonly allowedAddresses?: readonly string[];
  /** Endpoints one brand may have (`WEBHOOK_MAX_ENDPOINTS_PER_BRAND`); {@link defaultMaxWebhookEndpointsPerBrand} when absent. */
  readonly maxEndpointsPerBrand?: number;
}

/** Default of `WEBHOOK_MAX_ENDPOINTS_PER_BRAND`: every event writes at most this many deliveries. */
export const defaultMaxWebhookEndpointsPerBrand = 20;

/**
 * Problems of an endpoint URL under the settings: the domain's URL rules, then the address rule the
 * sender applies at delivery time, for what can be known without resolving a name: an address
 * literal in a refused range (or an IPv6 form embedding one), or `localhost`, is refused unless allowed.
 * (A name resolving to such an address is refused at each delivery, when it is resolved.)
 */
function endpointUrlViolations(url: string, settings: WebhookSettings): FieldViolation[] {
  const violations = webhookUrlViolations(url, settings.allowLoopback);
  if (violations.length > 0) return violations;
  // `localhost.` is `localhost`: a trailing dot does not get a name past the rule.
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(host) !== 0) {
    const refusal = addressRefusal(host, settings.allowLoopback, addressAllowList(settings.allowedAddresses ?? []));
    return refusal === null ? [] : [{ field: 'url', message: `must not point at ${refusal}` }];
  }
  return isLoopbackHost(host) && !settings.allowLoopback ? [{ field: 'url', message: `must not point at a loopback host (${host})` }] : [];
}

/** An endpoint as callers see it: never a secret. */
export interface WebhookEndpointView {
  readonly id: string;
  readonly brandId: string;
  readonly url: string;
  readonly description: string;
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
  /** Why the service disabled it (`gone`, `failing`), or null. */
  readonly disabledReason: string | null;
  /** When a rotated-out secret stops signing, or null. */
  readonly previousSecretExpiresAt: Date | null;
  /** Attempts failed in a row since the last success. */
  readonly consecutiveFailures: number;
  /** Until when the circuit breaker pauses it (its deliveries wait), or null when it is not paused. */
  readonly pausedUntil: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Default page size of {@link listWebhookDeliveriesOf}. */
export const defaultDeliveryPageSize = 50;
/** Default page size of {@link listWebhookEndpointsOf}. */
export const defaultEndpointPageSize = 50;

/** What a sealed secret of an endpoint is bound to: a sealed value copied to another row does not open. */
export const webhookSecretContext = (brandId: string, endpointId: string): string => `webhook-endpoint:${brandId}:${endpointId}`;

/** Seals an endpoint's signing secret for storage with the context's first key. */
const seal = (ctx: UseCaseContext, brandId: string, endpointId: string, secret: string): string =>
  sealSecret(ctx.webhookSecretKeys, secret, webhookSecretContext(brandId, endpointId), ctx.randomFill);

function view(e: WebhookEndpointRecord): WebhookEndpointView {
  return {
    id: e.id,
    brandId: e.brandId,
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    previousSecretExpiresAt: e.previousSecretExpiresAt,
    consecutiveFailures: e.consecutiveFailures,
    pausedUntil: e.pausedUntil,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

function endpointEvent(
  brandId: string,
  eventType: NewEvent['eventType'],
  endpointId: string,
  actor: string | null,
  payload: Record<string, unknown>,
): NewEvent {
  return { brandId, eventType, entityType: 'webhook_endpoint', entityId: endpointId, actor, payload };
}

function descriptionViolations(description: string): FieldViolation[] {
  return description.length > 500 ? [{ field: 'description', message: 'must be at most 500 characters' }] : [];
}

/** Parameters of {@link createWebhookEndpoint}. */
export interface NewWebhookEndpoint {
  readonly brandId: string;
  readonly url: string;
  /** Event types delivered; empty delivers every event. */
  readonly eventTypes: readonly string[];
  readonly description: string;
}

/**
 * Creates an enabled endpoint with a fresh signing secret and writes webhook_endpoint_created
 * (without the secret; delivered to the new endpoint alone). The secret is returned here once;
 * nothing returns it later. IllegalStateError when the brand already has the endpoints its limit
 * allows (`maxEndpointsPerBrand`), counted under the brand's row lock so racing creations cannot pass it.
 */
export async function createWebhookEndpoint(
  ctx: UseCaseContext,
  actor: Actor,
  settings: WebhookSettings,
  input: NewWebhookEndpoint,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  assertValid([...endpointUrlViolations(input.url, settings), ...webhookEventTypeViolations(input.eventTypes), ...descriptionViolations(input.description)]);
  const secret = generateWebhookSecret(ctx.randomFill);
  const id = randomUUID();
  const max = settings.maxEndpointsPerBrand ?? defaultMaxWebhookEndpointsPerBrand;
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    if ((await countWebhookEndpointsLocked(em, input.brandId)) >= max) {
      throw new IllegalStateError(
        `brand ${input.brandId} already has ${max} webhook endpoints, the limit (WEBHOOK_MAX_ENDPOINTS_PER_BRAND); delete one before creating another`,
      );
    }
    await insertWebhookEndpoint(em, {
      brandId: input.brandId,
      id,
      url: input.url,
      description: input.description,
      eventTypes: input.eventTypes,
      enabled: true,
      secret: seal(ctx, input.brandId, id, secret),
      createdAt: now,
    });
    await appendEvents(em, now, [
      endpointEvent(input.brandId, 'webhook_endpoint_created', id, actor.id, {
        url: input.url,
        event_types: input.eventTypes,
        description: input.description,
      }),
    ]);
    const created = await findWebhookEndpoint(em, input.brandId, id);
    return { endpoint: view(created!), secret };
  });
}

/** A page of the brand's endpoints, oldest first by (created_at, id), without secrets. */
export async function listWebhookEndpointsOf(
  ctx: UseCaseContext,
  brandId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null } = { limit: null, cursor: null },
): Promise<Page<WebhookEndpointView>> {
  const size = resolvePageSize(query.limit, defaultEndpointPageSize);
  const page = toPage(await listWebhookEndpoints(unitOfWork(ctx.db), brandId, size + 1, query.cursor), size, (e) => ({ at: e.createdAt, id: e.id }));
  return { ...page, items: page.items.map(view) };
}

/** Parameters of {@link updateWebhookEndpointOf}; unset fields stay as they are. */
export interface WebhookEndpointUpdate {
  readonly brandId: string;
  readonly endpointId: string;
  readonly url?: string | undefined;
  readonly eventTypes?: readonly string[] | undefined;
  readonly description?: string | undefined;
  /** Enabling also clears the service's reason, failure streak and pause; pending deliveries then resume. */
  readonly enabled?: boolean | undefined;
}

/** Changes an endpoint's URL, filter, description or enabled flag and writes webhook_endpoint_updated. NotFoundError for a missing or foreign one. */
export async function updateWebhookEndpointOf(
  ctx: UseCaseContext,
  actor: Actor,
  settings: WebhookSettings,
  input: WebhookEndpointUpdate,
): Promise<WebhookEndpointView> {
  assertValid([
    ...(input.url === undefined ? [] : endpointUrlViolations(input.url, settings)),
    ...(input.eventTypes === undefined ? [] : webhookEventTypeViolations(input.eventTypes)),
    ...(input.description === undefined ? [] : descriptionViolations(input.description)),
  ]);
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    const found = isUuid(input.endpointId) ? await findWebhookEndpoint(em, input.brandId, input.endpointId, true) : null;
    if (found === null) throw new NotFoundError(`webhook endpoint ${input.endpointId} not found`);
    const change: WebhookEndpointChange = {
      url: input.url,
      eventTypes: input.eventTypes,
      description: input.description,
      enabled: input.enabled,
      ...(input.enabled === true ? { disabledReason: null, failingSince: null, consecutiveFailures: 0, pausedUntil: null } : {}),
    };
    await updateWebhookEndpoint(em, input.brandId, found.id, change, now);
    if (input.enabled === true && !found.enabled) await resumeWebhookDeliveries(em, input.brandId, found.id, now);
    const payload: Record<string, unknown> = {};
    if (input.url !== undefined) payload['url'] = input.url;
    if (input.eventTypes !== undefined) payload['event_types'] = input.eventTypes;
    if (input.description !== undefined) payload['description'] = input.description;
    if (input.enabled !== undefined) payload['enabled'] = input.enabled;
    await appendEvents(em, now, [endpointEvent(input.brandId, 'webhook_endpoint_updated', found.id, actor.id, payload)]);
    return view((await findWebhookEndpoint(em, input.brandId, found.id))!);
  });
}

/** Deletes an endpoint with its deliveries and writes webhook_endpoint_deleted. NotFoundError for a missing or foreign one. */
export async function deleteWebhookEndpointOf(ctx: UseCaseContext, actor: Actor, brandId: string, endpointId: string): Promise<void> {
  await transaction(ctx.db, async (em) => {
    const found = isUuid(endpointId) ? await findWebhookEndpoint(em, brandId, endpointId, true) : null;
    if (found === null || !(await deleteWebhookEndpoint(em, brandId, found.id))) throw new NotFoundError(`webhook endpoint ${endpointId} not found`);
    await appendEvents(em, ctx.clock(), [endpointEvent(brandId, 'webhook_endpoint_deleted', found.id, actor.id, { url: found.url })]);
  });
}

/**
 * Replaces an endpoint's signing secret with a fresh one, returned once. The old secret keeps
 * signing next to the new one (both signatures are sent) for 24 hours; a second rotation within
 * them drops the oldest. Writes webhook_endpoint_secret_rotated (without secrets).
 */
export async function rotateWebhookSecret(
  ctx: UseCaseContext,
  actor: Actor,
  brandId: string,
  endpointId: string,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const secret = generateWebhookSecret(ctx.randomFill);
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    const found = isUuid(endpointId) ? await findWebhookEndpoint(em, brandId, endpointId, true) : null;
    if (found === null) throw new NotFoundError(`webhook endpoint ${endpointId} not found`);
    const expiresAt = new Date(now.getTime() + webhookSecretOverlapMs);
    // The outgoing secret stays as stored (sealed for this row); the new one is sealed with the current key.
    await updateWebhookEndpoint(
      em,
      brandId,
      found.id,
      { secret: seal(ctx, brandId, found.id, secret), previousSecret: found.secret, previousSecretExpiresAt: expiresAt },
      now,
    );
    await appendEvents(em, now, [
      endpointEvent(brandId, 'webhook_endpoint_secret_rotated', found.id, actor.id, { previous_secret_expires_at: expiresAt.toISOString() }),
    ]);
    return { endpoint: view((await findWebhookEndpoint(em, brandId, found.id))!), secret };
  });
}

/** A page of an endpoint's deliveries, newest first by (created_at, id). NotFoundError for a missing or foreign endpoint. */
export async function listWebhookDeliveriesOf(
  ctx: UseCaseContext,
  brandId: string,
  endpointId: string,
  query: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<WebhookDeliveryRecord>> {
  const size = resolvePageSize(query.limit, defaultDeliveryPageSize);
  const em = unitOfWork(ctx.db);
  if (!isUuid(endpointId) || (await findWebhookEndpoint(em, brandId, endpointId)) === null) throw new NotFoundError(`webhook endpoint ${endpointId} not found`);
  return toPage(await listWebhookDeliveries(em, brandId, endpointId, size + 1, query.cursor), size, (d) => ({ at: d.createdAt, id: d.id }));
}

/**
 * Sends a delivery again: it becomes due now with a fresh attempt count and the same webhook-id,
 * whatever its outcome was. NotFoundError for a missing or foreign one; IllegalStateError while a
 * worker is sending it.
 */
export async function redeliverWebhook(ctx: UseCaseContext, brandId: string, deliveryId: string): Promise<void> {
  if (!isUuid(deliveryId)) throw new NotFoundError(`webhook delivery ${deliveryId} not found`);
  const outcome = await requeueWebhookDelivery(unitOfWork(ctx.db), brandId, deliveryId, ctx.clock());
  if (outcome === 'missing') throw new NotFoundError(`webhook delivery ${deliveryId} not found`);
  if (outcome === 'delivering') throw new IllegalStateError(`webhook delivery ${deliveryId} is being delivered`);
}

/**
 * Seals every endpoint secret that is not sealed with the current key: secrets stored before
 * sealing existed, and secrets sealed with an older key after `WEBHOOK_SECRET_KEYS` put a new
 * key first. Each row is replaced compare-and-set (a concurrent rotation wins and is left alone);
 * safe to run by several processes at once. Returns the number of endpoints sealed again.
 */
export async function sealWebhookSecrets(ctx: UseCaseContext, batch = 200): Promise<number> {
  const current = ctx.webhookSecretKeys[0];
  if (current === undefined) return 0;
  let sealed = 0;
  const skipped = new Set<string>();
  for (;;) {
    const found = (await listWebhookSecretsToSeal(unitOfWork(ctx.db), current.id, batch + skipped.size)).filter((r) => !skipped.has(r.id));
    if (found.length === 0) return sealed;
    const resealed: { row: (typeof found)[number]; secret: string; previous: string | null }[] = [];
    for (const row of found) {
      const context = webhookSecretContext(row.brandId, row.id);
      try {
        const secret = seal(ctx, row.brandId, row.id, openSecret(ctx.webhookSecretKeys, row.secret, context));
        const previous = row.previousSecret === null ? null : seal(ctx, row.brandId, row.id, openSecret(ctx.webhookSecretKeys, row.previousSecret, context));
        resealed.push({ row, secret, previous });
      } catch (err) {
        // Sealed with a key no longer configured: left as it is (its deliveries fail until the key is listed again).
        if (!isSecretBoxError(err)) throw err;
        skipped.add(row.id);
      }
    }
    await transaction(ctx.db, async (em) => {
      for (const { row, secret, previous } of resealed) {
        if (await replaceWebhookSecrets(em, row, secret, previous)) sealed++;
        else skipped.add(row.id);
      }
    });
  }
}
