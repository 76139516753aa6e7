import { randomUUID } from 'node:crypto';
import {
  addGrantAllocated,
  allocatableBatches,
  allocateUnits,
  appendEvents,
  findAllocationRequestByKey,
  findBatch,
  findPartner,
  findPartnerGrant,
  findProduct,
  insertAllocationRequest,
  insertApiKey,
  insertEpcisEvents,
  insertPartner,
  insertPartnerGrant,
  listPartners as listPartnerRows,
  readAllocatedUnits,
  type AllocatedUnit,
  type NewEpcisEvent,
  type PartnerListing,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  allocationVocabulary,
  ForbiddenError,
  generateApiKey,
  hashApiKeySecret,
  IdempotencyKeyReusedError,
  IllegalStateError,
  InvalidInputError,
  isUuid,
  maxAllocationQuantity,
  maxPartnerNameLength,
  NotFoundError,
  partnerGrantViolations,
  partnerKeyScopes,
  quotaRefusal,
  type FieldViolation,
  type NewEvent,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { requestFingerprint } from '../idempotency.ts';
import { derivedUuid } from './serials.ts';
import { revokeApiKey } from '../access/index.ts';

/** Longest idempotency key of an allocation request. */
const maxKeyLength = 200;
/** Serials named in a serials_allocated event; the rest are counted. */
const eventSerials = 100;

/**
 * Records a packaging line or contract manufacturer of the brand (a partner), with a
 * partner_created event. Its name is 1 to 200 characters. Returns its id.
 */
export async function createPartner(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly name: string },
): Promise<{ partnerId: string }> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > maxPartnerNameLength)
    throw new InvalidInputError([{ field: 'name', message: `must be 1 to ${maxPartnerNameLength} characters` }]);
  const partnerId = randomUUID();
  await transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    await insertPartner(em, { brandId: input.brandId, id: partnerId, name, createdBy: actor.id, at: now });
    await appendEvents(em, now, [
      { brandId: input.brandId, eventType: 'partner_created', entityType: 'partner', entityId: partnerId, actor: actor.id, payload: { name } },
    ]);
  });
  return { partnerId };
}

/** Parameters of {@link grantPartnerKey}. */
export interface GrantPartnerKeyInput {
  readonly brandId: string;
  readonly partnerId: string;
  /** The key's label. */
  readonly name: string;
  /** Exactly one of a product (any of its serial batches) and one mint batch. */
  readonly productId: string | null;
  readonly mintBatchId: string | null;
  /** Most serials ever allocated under the key. */
  readonly quota: number;
}

/** A partner key as granted: the full key is in this answer only. */
export interface GrantedPartnerKey {
  readonly keyId: string;
  /** The key itself (`mk_...`), shown once; only a hash of its secret is stored. */
  readonly apiKey: string;
  readonly partnerId: string;
  readonly quota: number;
}

/**
 * Grants a partner of the brand an API key restricted to one product or one mint batch of the
 * brand, with a quota of serials (partner_key_granted event). The key can call only the operations
 * marked for partners; it is listed and revoked like every API key (revoking it stops it at once).
 * A missing or foreign partner, product or batch: NotFoundError; a batch that has no serial units:
 * IllegalStateError; bad fields: InvalidInputError naming each.
 */
export async function grantPartnerKey(ctx: UseCaseContext, actor: Actor, input: GrantPartnerKeyInput): Promise<GrantedPartnerKey> {
  const v: FieldViolation[] = partnerGrantViolations(input);
  if (!isUuid(input.partnerId)) v.push({ field: 'partner_id', message: 'must be a uuid' });
  if (input.productId !== null && !isUuid(input.productId)) v.push({ field: 'product_id', message: 'must be a uuid' });
  if (input.mintBatchId !== null && !isUuid(input.mintBatchId)) v.push({ field: 'mint_batch_id', message: 'must be a uuid' });
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId } = input;
  const em = unitOfWork(ctx.db);
  if ((await findPartner(em, brandId, input.partnerId)) === null) throw new NotFoundError(`partner ${input.partnerId} not found`);
  if (input.productId !== null && (await findProduct(em, brandId, input.productId)) === null) {
    throw new NotFoundError(`product ${input.productId} not found`);
  }
  if (input.mintBatchId !== null) {
    const batch = await findBatch(em, brandId, input.mintBatchId);
    if (batch === null) throw new NotFoundError(`mint batch ${input.mintBatchId} not found`);
    if (batch.identityMode !== 'serial')
      throw new IllegalStateError(`mint batch ${input.mintBatchId} has no serial units (identity mode ${batch.identityMode})`);
  }
  const generated = generateApiKey(ctx.randomFill);
  const keyId = randomUUID();
  await transaction(ctx.db, async (tx) => {
    const now = ctx.clock();
    await insertApiKey(tx, {
      brandId,
      id: keyId,
      lookupId: generated.lookupId,
      name: input.name.trim(),
      secretHash: hashApiKeySecret(generated.secret),
      scopes: partnerKeyScopes,
      createdAt: now,
      partnerId: input.partnerId,
    });
    await insertPartnerGrant(tx, {
      brandId,
      id: keyId,
      partnerId: input.partnerId,
      productId: input.productId,
      mintBatchId: input.mintBatchId,
      quota: input.quota,
      createdBy: actor.id,
      at: now,
    });
    await appendEvents(tx, now, [
      {
        brandId,
        eventType: 'partner_key_granted',
        entityType: 'partner',
        entityId: input.partnerId,
        actor: actor.id,
        payload: { key_id: keyId, name: input.name.trim(), product_id: input.productId, mint_batch_id: input.mintBatchId, quota: input.quota },
      },
    ]);
  });
  return { keyId, apiKey: generated.key, partnerId: input.partnerId, quota: input.quota };
}

/** The brand's partners by name, each with its keys (restriction, quota, allocated, revoked), without secrets. */
export async function listPartners(ctx: UseCaseContext, brandId: string): Promise<PartnerListing[]> {
  return listPartnerRows(unitOfWork(ctx.db), brandId);
}

/**
 * Revokes a partner key of the brand at once (it answers as an unknown key from then on); repeating
 * it changes nothing. The serials allocated under it stay the partner's. A brand key, a missing or a
 * foreign key: NotFoundError.
 */
export async function revokePartnerKey(ctx: UseCaseContext, brandId: string, keyId: string): Promise<void> {
  if (!isUuid(keyId)) throw new InvalidInputError([{ field: 'key_id', message: 'must be a uuid' }]);
  if ((await findPartnerGrant(unitOfWork(ctx.db), brandId, keyId)) === null) throw new NotFoundError(`partner key ${keyId} not found`);
  await revokeApiKey(ctx, brandId, keyId);
}

/** The partner key calling, as {@link allocateSerials} and {@link getPartnerAllocation} need it. */
export interface PartnerCaller {
  /** The API key's id (its grant). */
  readonly apiKeyId: string | null;
  readonly partnerId: string | null;
}

/** Parameters of {@link allocateSerials}. */
export interface AllocateSerialsInput {
  readonly brandId: string;
  /** Serials wanted: exactly this many are allocated, or none. */
  readonly quantity: number;
  /** The caller's key: a repeat answers the same serials and allocates nothing. */
  readonly idempotencyKey: string;
}

/** An allocation as the partner sees it. */
export interface SerialAllocation {
  readonly requestId: string;
  readonly quantity: number;
  /** The allocated units, by batch and seq. */
  readonly units: readonly AllocatedUnit[];
  /** The key's quota left after this request. */
  readonly quotaLeft: number;
  /** True when the key named an earlier request: this call allocated nothing. */
  readonly replayed: boolean;
}

async function grantOf(ctx: UseCaseContext, brandId: string, caller: PartnerCaller) {
  if (caller.partnerId === null || caller.apiKeyId === null)
    throw new ForbiddenError('only a partner key requests serials: the brand grants one with GrantPartnerKey');
  const grant = await findPartnerGrant(unitOfWork(ctx.db), brandId, caller.apiKeyId);
  if (grant === null || grant.partnerId !== caller.partnerId) throw new ForbiddenError('this partner key has no grant on the brand');
  return grant;
}

/**
 * Allocates exactly `quantity` (1..10,000) serials to the calling partner key (OPEN-SCS request):
 * issued, never allocated units of its grant's batch, or of its product's serial batches oldest
 * first, lowest seq first. Each unit is taken by a compare-and-set (two partners never get the same
 * serial, and a serial once allocated, even returned, is never allocated again), the grant's
 * allocated count by another against its quota, all in one transaction with a serials_allocated
 * event per batch and an EPCIS ObjectEvent (ADD, bizStep reserving, disposition reserved). Not
 * enough serials, or a quantity above the quota left: IllegalStateError naming what is available,
 * and nothing is allocated. Idempotent per key: a repeat answers the same serials (replayed);
 * another request under a used key is IdempotencyKeyReusedError. Only a partner key may call it.
 */
export async function allocateSerials(ctx: UseCaseContext, caller: PartnerCaller, input: AllocateSerialsInput): Promise<SerialAllocation> {
  const v: FieldViolation[] = [];
  if (!Number.isInteger(input.quantity) || input.quantity < 1 || input.quantity > maxAllocationQuantity) {
    v.push({ field: 'quantity', message: `must be a whole number from 1 to ${maxAllocationQuantity}` });
  }
  if (input.idempotencyKey.length === 0 || input.idempotencyKey.length > maxKeyLength)
    v.push({ field: 'idempotency_key', message: `must be 1 to ${maxKeyLength} characters` });
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId, quantity } = input;
  const grant = await grantOf(ctx, brandId, caller);
  const requestHash = requestFingerprint({ quantity });
  const known = await findAllocationRequestByKey(unitOfWork(ctx.db), brandId, grant.id, input.idempotencyKey);
  if (known !== null) return replay(ctx, brandId, grant.id, known, requestHash, input.idempotencyKey);
  const requestId = randomUUID();
  const done = await transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    if (
      !(await insertAllocationRequest(em, {
        brandId,
        id: requestId,
        grantId: grant.id,
        partnerId: grant.partnerId,
        idempotencyKey: input.idempotencyKey,
        requestHash,
        quantity,
        at: now,
      }))
    )
      return false;
    // The grant's row is locked first: one key's requests run one after another, and its quota is read as it is.
    const locked = (await findPartnerGrant(em, brandId, grant.id, true))!;
    const overQuota = quotaRefusal(locked, quantity);
    if (overQuota !== null) throw new IllegalStateError(overQuota);
    let allocated = 0;
    for (const batchId of await allocatableBatches(em, brandId, locked)) {
      allocated += await allocateUnits(em, {
        brandId,
        mintBatchId: batchId,
        partnerId: grant.partnerId,
        grantId: grant.id,
        requestId,
        at: now,
        limit: quantity - allocated,
      });
      if (allocated === quantity) break;
    }
    if (allocated < quantity) {
      const scope = locked.mintBatchId !== null ? `mint batch ${locked.mintBatchId}` : `product ${locked.productId}`;
      throw new IllegalStateError(`only ${allocated} unallocated issued serials of ${scope} are available; ${quantity} requested, none allocated`);
    }
    if (!(await addGrantAllocated(em, brandId, grant.id, quantity))) throw new IllegalStateError(quotaRefusal(locked, quantity) ?? 'quota exceeded');
    const units = await readAllocatedUnits(em, brandId, requestId);
    await appendEvents(em, now, allocationEvents(brandId, requestId, caller, grant.partnerId, units));
    await insertEpcisEvents(em, allocationEpcisEvents(brandId, requestId, grant.partnerId, units, now));
    return true;
  });
  if (!done) {
    const raced = await findAllocationRequestByKey(unitOfWork(ctx.db), brandId, grant.id, input.idempotencyKey);
    if (raced === null) throw new Error('allocation request key vanished');
    return replay(ctx, brandId, grant.id, raced, requestHash, input.idempotencyKey);
  }
  const after = (await findPartnerGrant(unitOfWork(ctx.db), brandId, grant.id))!;
  return {
    requestId,
    quantity,
    units: await readAllocatedUnits(unitOfWork(ctx.db), brandId, requestId),
    quotaLeft: after.quota - after.allocated,
    replayed: false,
  };
}

async function replay(
  ctx: UseCaseContext,
  brandId: string,
  grantId: string,
  known: { id: string; requestHash: string; quantity: number },
  requestHash: string,
  key: string,
): Promise<SerialAllocation> {
  if (known.requestHash !== requestHash) throw new IdempotencyKeyReusedError(`idempotency_key ${JSON.stringify(key)} was used for another allocation request`);
  const em = unitOfWork(ctx.db);
  const grant = (await findPartnerGrant(em, brandId, grantId))!;
  return {
    requestId: known.id,
    quantity: known.quantity,
    units: await readAllocatedUnits(em, brandId, known.id),
    quotaLeft: grant.quota - grant.allocated,
    replayed: true,
  };
}

function byBatch(units: readonly AllocatedUnit[]): Map<string, AllocatedUnit[]> {
  const out = new Map<string, AllocatedUnit[]>();
  for (const u of units) {
    const list = out.get(u.mintBatchId);
    if (list === undefined) out.set(u.mintBatchId, [u]);
    else list.push(u);
  }
  return out;
}

function allocationEvents(brandId: string, requestId: string, caller: PartnerCaller, partnerId: string, units: readonly AllocatedUnit[]): NewEvent[] {
  return [...byBatch(units)].map(([batchId, list]) => ({
    brandId,
    eventType: 'serials_allocated',
    entityType: 'mint_batch',
    entityId: batchId,
    actor: caller.apiKeyId,
    payload: {
      request_id: requestId,
      partner_id: partnerId,
      key_id: caller.apiKeyId,
      count: list.length,
      serials: list.slice(0, eventSerials).map((u) => u.serial),
      first_seq: list[0]!.seq,
      last_seq: list[list.length - 1]!.seq,
    },
  }));
}

/**
 * The EPCIS 2.0 ObjectEvents of an allocation, one per batch: action ADD, bizStep `reserving`,
 * disposition `reserved`, the partner named as the destination (possessing party, its
 * `urn:uuid:` id). The event id is derived from the request and the batch.
 */
export function allocationEpcisEvents(brandId: string, requestId: string, partnerId: string, units: readonly AllocatedUnit[], at: Date): NewEpcisEvent[] {
  const vocab = allocationVocabulary;
  return [...byBatch(units)].map(([batchId, list]) => {
    const id = derivedUuid(`${requestId}/${vocab.bizStep}/${batchId}`);
    const epcList = list.map((u) => u.epc);
    const body = {
      type: 'ObjectEvent',
      eventID: `urn:uuid:${id}`,
      eventTime: at.toISOString(),
      eventTimeZoneOffset: '+00:00',
      recordTime: at.toISOString(),
      epcList,
      action: vocab.action,
      bizStep: vocab.bizStep,
      disposition: vocab.disposition,
      destinationList: [{ type: 'possessing_party', destination: `urn:uuid:${partnerId}` }],
    };
    return {
      brandId,
      id,
      moveId: null,
      eventType: 'ObjectEvent',
      eventTime: at,
      recordTime: at,
      bizStep: vocab.bizStep,
      disposition: vocab.disposition,
      epcs: epcList,
      body,
      partnerId,
    };
  });
}

/** What a partner key sees of its grant. */
export interface PartnerAllocationView {
  readonly partnerId: string;
  readonly partnerName: string;
  readonly keyId: string;
  readonly productId: string | null;
  readonly mintBatchId: string | null;
  readonly quota: number;
  readonly allocated: number;
}

/** The calling partner key's grant: its restriction, quota and serials allocated so far. Only a partner key may call it. */
export async function getPartnerAllocation(ctx: UseCaseContext, caller: PartnerCaller, brandId: string): Promise<PartnerAllocationView> {
  const grant = await grantOf(ctx, brandId, caller);
  const partner = await findPartner(unitOfWork(ctx.db), brandId, grant.partnerId);
  return {
    partnerId: grant.partnerId,
    partnerName: partner?.name ?? '',
    keyId: grant.id,
    productId: grant.productId,
    mintBatchId: grant.mintBatchId,
    quota: grant.quota,
    allocated: grant.allocated,
  };
}
