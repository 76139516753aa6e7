import { randomUUID } from 'node:crypto';
import {
  allocateSerialRefs,
  ancestorsOf,
  containerPartners,
  readUnitPartners,
  appendEvents,
  containerContents,
  containersOfUnits,
  containerTree,
  countContents,
  countUnitsInContainers,
  findBrandIdBySlug,
  findContainerBySscc,
  lockContainersForShare,
  unitKeysInContainers,
  type PackedKey,
  findContainerMintByKey,
  findContainerOpByKey,
  findContainersBySscc,
  heightsOf,
  insertContainerMint,
  insertContainerOp,
  insertContainerOps,
  insertContainers,
  insertEpcisEvents,
  listSsccsOfMint,
  lockUnitsForMove,
  moveContainerStates,
  packContainers,
  packContainersInto,
  packUnits,
  packUnitsInto,
  latestEventTimeNaming,
  latestMintOf,
  readBrandContainerConfig,
  setBrandCompanyPrefix,
  setContainerMaxDepth,
  isUniqueViolation,
  ssccOfContainer,
  transaction,
  unitOfWork,
  unpackContainers,
  unpackUnits,
  type ContainerRecord,
  type ContentsCursor,
  type Em,
  type NewEpcisEvent,
  type PackedUnit,
} from '@mint/db';
import {
  aggregationVocabulary,
  checkPackParent,
  companyPrefixViolations,
  ConflictError,
  containerLevelViolations,
  containerPackRefusal,
  containerStateAfter,
  defaultContainerMaxDepth,
  epcisVocabularyOf,
  IdempotencyKeyReusedError,
  IllegalStateError,
  InvalidInputError,
  isSscc,
  maxContainerMaxDepth,
  NotFoundError,
  ForbiddenError,
  publicReasonOf,
  reactivatableReasons,
  serialReferenceCapacity,
  ssccOf,
  ssccOfEpc,
  ssccViolations,
  unitPackRefusal,
  type ContainerState,
  type DecommissionReason,
  type FieldViolation,
  type PackRefusal,
  type SerialMove,
} from '@mint/domain';
import { authenticate, authorizeAuthenticated, type Credentials } from '../access/index.ts';
import type { Actor, UseCaseContext } from '../context.ts';
import { requestFingerprint } from '../idempotency.ts';
import { derivedUuid } from './derived-uuid.ts';

/** Most containers one MintContainers request issues. */
export const maxMintContainers = 10_000;
/** Most units and containers one pack or unpack request names. */
export const maxPackItems = 10_000;
/** Items per page of a container's contents unless asked otherwise; at most {@link maxContentsPage}. */
export const defaultContentsPage = 100;
/** Most items one page of contents holds. */
export const maxContentsPage = 1000;
/** Longest idempotency key. */
const maxKeyLength = 200;
/** Serials and SSCCs named in an audit event; the rest are counted. */
const eventItems = 100;

const keyViolations = (key: string): FieldViolation[] =>
  key.length === 0 || key.length > maxKeyLength ? [{ field: 'idempotency_key', message: `must be 1 to ${maxKeyLength} characters` }] : [];

/*
 * Partners and containers. A partner key (Actor.partnerId) may mint, pack, unpack and read
 * containers, within this rule: a container is the partner's when it was minted under one of that
 * partner's keys (containers the brand minted stay the brand's; there is no hand-over). A partner
 * packs into and unpacks from its own containers only, packs only units allocated to it and
 * containers of its own (the others are ForbiddenError naming each item), and reads only its own
 * containers (another's answers NotFoundError, as an unknown SSCC). The brand's own callers may act
 * on every container of the brand, the partners' included. A partner's idempotency keys are kept
 * apart from the brand's and other partners'.
 */

/** The key stored for a request: a partner's keys never meet the brand's or another partner's. */
const storedKey = (actor: Actor, key: string): string => (actor.partnerId == null ? key : `partner:${actor.partnerId}:${key}`);

/** A brand's aggregation settings. */
export interface ContainerSettings {
  /** The GS1 company prefix its SSCCs carry; null: it mints no containers. */
  readonly companyPrefix: string | null;
  /** Deepest nesting of containers (a case in a pallet is 2). */
  readonly maxDepth: number;
}

/** Parameters of {@link setContainerSettings}: a field left null keeps its value. */
export interface SetContainerSettingsInput {
  readonly brandId: string;
  readonly companyPrefix: string | null;
  readonly maxDepth: number | null;
}

/**
 * Sets the brand's GS1 company prefix (4 to 12 digits; one another brand holds is ConflictError)
 * and its max_depth (1 to 8), with a container_settings_set event. A prefix changed after SSCCs
 * were minted applies to the next ones; the serial reference counter goes on, so no SSCC repeats.
 */
export async function setContainerSettings(ctx: UseCaseContext, actor: Actor, input: SetContainerSettingsInput): Promise<ContainerSettings> {
  const v: FieldViolation[] = [];
  if (input.companyPrefix !== null) v.push(...companyPrefixViolations(input.companyPrefix));
  if (input.maxDepth !== null && (!Number.isInteger(input.maxDepth) || input.maxDepth < 1 || input.maxDepth > maxContainerMaxDepth)) {
    v.push({ field: 'max_depth', message: `must be a whole number from 1 to ${maxContainerMaxDepth}` });
  }
  if (input.companyPrefix === null && input.maxDepth === null) v.push({ field: 'gs1_company_prefix', message: 'give gs1_company_prefix, max_depth or both' });
  if (v.length > 0) throw new InvalidInputError(v);
  try {
    return await transaction(ctx.db, async (em) => {
      const now = ctx.clock();
      if (input.companyPrefix !== null) await setBrandCompanyPrefix(em, input.brandId, input.companyPrefix);
      if (input.maxDepth !== null) await setContainerMaxDepth(em, input.brandId, input.maxDepth, now);
      const config = await readBrandContainerConfig(em, input.brandId);
      if (config === null) throw new NotFoundError(`brand ${input.brandId} not found`);
      const settings = { companyPrefix: config.companyPrefix, maxDepth: config.maxDepth ?? defaultContainerMaxDepth };
      await appendEvents(em, now, [
        {
          brandId: input.brandId,
          eventType: 'container_settings_set',
          entityType: 'brand',
          entityId: input.brandId,
          actor: actor.id,
          payload: { gs1_company_prefix: settings.companyPrefix, max_depth: settings.maxDepth },
        },
      ]);
      return settings;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError('gs1_company_prefix is held by another brand', { cause: error });
    throw error;
  }
}

/** The brand's aggregation settings. */
export async function getContainerSettings(ctx: UseCaseContext, brandId: string): Promise<ContainerSettings> {
  const config = await readBrandContainerConfig(unitOfWork(ctx.db), brandId);
  if (config === null) throw new NotFoundError(`brand ${brandId} not found`);
  return { companyPrefix: config.companyPrefix, maxDepth: config.maxDepth ?? defaultContainerMaxDepth };
}

/** Parameters of {@link mintContainers}. */
export interface MintContainersInput {
  readonly brandId: string;
  /** case, pallet, ... */
  readonly level: string;
  /** How many, 1 to {@link maxMintContainers}. */
  readonly count: number;
  /** The SSCCs' extension digit, 0 to 9 (the brand's own use, e.g. a packaging line). */
  readonly extensionDigit: number;
  readonly idempotencyKey: string;
}

/** Containers a mint issued. */
export interface MintedContainers {
  readonly mintId: string;
  readonly level: string;
  /** Their SSCCs, in order of serial reference. */
  readonly ssccs: readonly string[];
  /** True when the key named an earlier mint: this call issued nothing. */
  readonly replayed: boolean;
}

/**
 * Mints `count` containers of `level` with SSCCs under the brand's GS1 company prefix: serial
 * references come from the brand's counter, which only grows, so an SSCC is never issued twice
 * (and, the prefix being unique to one brand, never by two brands). The containers start
 * commissioned, in no container, with one EPCIS ObjectEvent (ADD, commissioning, active) naming
 * them, so each is commissioned before any event aggregates it. A brand without a prefix, or
 * whose prefix has no references left, is IllegalStateError. Idempotent by key: a repeat answers
 * the same SSCCs (replayed), another request under a used key is IdempotencyKeyReusedError.
 * Containers a partner key mints are that partner's (see the rule above).
 */
export async function mintContainers(ctx: UseCaseContext, actor: Actor, input: MintContainersInput): Promise<MintedContainers> {
  const v: FieldViolation[] = [...containerLevelViolations(input.level), ...keyViolations(input.idempotencyKey)];
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > maxMintContainers)
    v.push({ field: 'count', message: `must be a whole number from 1 to ${maxMintContainers}` });
  if (!Number.isInteger(input.extensionDigit) || input.extensionDigit < 0 || input.extensionDigit > 9)
    v.push({ field: 'extension_digit', message: 'must be a digit, 0 to 9' });
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId } = input;
  const key = storedKey(actor, input.idempotencyKey);
  const requestHash = requestFingerprint({ level: input.level, count: input.count, extensionDigit: input.extensionDigit });
  const replay = async (): Promise<MintedContainers | null> => {
    const em = unitOfWork(ctx.db);
    const known = await findContainerMintByKey(em, brandId, key);
    if (known === null) return null;
    if (known.requestHash !== requestHash)
      throw new IdempotencyKeyReusedError(`idempotency_key ${JSON.stringify(input.idempotencyKey)} was used for another mint`);
    return { mintId: known.id, level: known.level, ssccs: await listSsccsOfMint(em, brandId, known.id), replayed: true };
  };
  const known = await replay();
  if (known !== null) return known;
  const minted = await transaction(ctx.db, async (em): Promise<MintedContainers> => {
    const config = await readBrandContainerConfig(em, brandId);
    if (config === null) throw new NotFoundError(`brand ${brandId} not found`);
    const prefix = config.companyPrefix;
    if (prefix === null)
      throw new IllegalStateError('the brand has no GS1 company prefix: set gs1_company_prefix (SetContainerSettings) before minting containers');
    const now = ctx.clock();
    const mintId = randomUUID();
    const first = await allocateSerialRefs(em, brandId, input.count, defaultContainerMaxDepth, now);
    if (first + input.count > serialReferenceCapacity(prefix)) {
      throw new IllegalStateError(
        `GS1 company prefix ${prefix} has ${Math.max(0, serialReferenceCapacity(prefix) - first)} SSCC serial references left; ${input.count} asked`,
      );
    }
    if (
      !(await insertContainerMint(em, {
        brandId,
        id: mintId,
        idempotencyKey: key,
        requestHash,
        level: input.level,
        extensionDigit: input.extensionDigit,
        count: input.count,
        companyPrefix: prefix,
        firstSerialRef: first,
        actor: actor.id,
        at: now,
      }))
    )
      throw new ConflictError(`idempotency_key ${JSON.stringify(input.idempotencyKey)} was used concurrently`); // rolls the references back
    const ssccs = Array.from({ length: input.count }, (_, i) => ssccOf(input.extensionDigit, prefix, first + i));
    await insertContainers(em, {
      brandId,
      mintId,
      level: input.level,
      resolverBaseUrl: config.resolverBaseUrl,
      ids: ssccs.map(() => randomUUID()),
      ssccs,
      at: now,
    });
    const epcs = ssccs.map((sscc) => `${config.resolverBaseUrl.replace(/\/+$/, '')}/00/${sscc}`);
    const id = derivedUuid(`${mintId}/commissioning`);
    await insertEpcisEvents(em, [
      {
        brandId,
        id,
        moveId: null,
        eventType: 'ObjectEvent',
        eventTime: now,
        recordTime: now,
        bizStep: 'commissioning',
        disposition: 'active',
        epcs,
        partnerId: actor.partnerId ?? null,
        body: {
          type: 'ObjectEvent',
          eventID: `urn:uuid:${id}`,
          eventTime: now.toISOString(),
          eventTimeZoneOffset: '+00:00',
          recordTime: now.toISOString(),
          epcList: epcs,
          action: 'ADD',
          bizStep: 'commissioning',
          disposition: 'active',
        },
      },
    ]);
    await appendEvents(em, now, [
      {
        brandId,
        eventType: 'containers_minted',
        entityType: 'container_mint',
        entityId: mintId,
        actor: actor.id,
        payload: { level: input.level, count: input.count, first_sscc: ssccs[0], last_sscc: ssccs.at(-1) },
      },
    ]);
    return { mintId, level: input.level, ssccs, replayed: false };
  }).catch(async (error: unknown) => {
    const raced = error instanceof ConflictError ? await replay() : null;
    if (raced === null) throw error;
    return raced;
  });
  return minted;
}

/** What a pack or unpack names inside the container. */
export interface ContainerItems {
  /** Units by serial. */
  readonly serials: readonly string[];
  /** Containers by SSCC. */
  readonly ssccs: readonly string[];
}

/** Parameters of {@link packContainer} and {@link unpackContainer}. */
export interface ContainerOpInput extends ContainerItems {
  readonly brandId: string;
  /** The parent container's SSCC. */
  readonly sscc: string;
  readonly idempotencyKey: string;
}

/** The outcome of a pack or unpack. */
export interface ContainerOpResult {
  readonly opId: string;
  readonly sscc: string;
  /** Units packed or unpacked. */
  readonly units: number;
  /** Containers packed or unpacked. */
  readonly containers: number;
  /** True when the key named an earlier request: this call changed nothing. */
  readonly replayed: boolean;
}

function itemViolations(items: ContainerItems, parent: string, allowEmpty: boolean): FieldViolation[] {
  const v: FieldViolation[] = [];
  const total = items.serials.length + items.ssccs.length;
  if ((!allowEmpty && total === 0) || total > maxPackItems)
    v.push({ field: 'serials', message: `serials and ssccs must name ${allowEmpty ? '' : '1 '}to ${maxPackItems} items together` });
  const bad = items.serials.findIndex((s) => !/^[0-9A-Za-z]{1,64}$/.test(s));
  if (bad !== -1) v.push({ field: `serials[${bad}]`, message: 'must be 1 to 64 letters or digits' });
  items.ssccs.forEach((s, i) => {
    v.push(...ssccViolations(s, `ssccs[${i}]`));
    if (s === parent) v.push({ field: `ssccs[${i}]`, message: 'must not be the container itself' });
  });
  return v;
}

/** A pack or unpack inside a caller's transaction (the RPC's, or a captured document's). */
interface OpInTransaction {
  readonly brandId: string;
  readonly sscc: string;
  readonly serials: readonly string[];
  readonly ssccs: readonly string[];
  readonly opId: string;
  readonly idempotencyKey: string;
  readonly requestHash: string;
  readonly actorId: string | null;
  /** The partner of a partner key: it may use only its own containers and allocated units. Null: the brand. */
  readonly partnerId: string | null;
  /** Where an item is named in the request, for errors (`serials`, or `epcisBody.eventList[3].childEPCs`). */
  readonly at: (kind: 'serials' | 'ssccs', index: number) => string;
  /** The captured event to store instead of the operation's own; called with what the operation did (the parent, the containers and units packed or unpacked). */
  readonly epcis?: (parent: ContainerRecord, items: CapturedItems) => NewEpcisEvent;
}

async function lockParentAndChildren(
  em: Em,
  brandId: string,
  sscc: string,
  ssccs: readonly string[],
): Promise<{ parent: ContainerRecord; children: ContainerRecord[] }> {
  // One statement locks the parent and the child containers in id order: two packs never deadlock on them.
  const locked = await findContainersBySscc(em, brandId, [sscc, ...ssccs], true);
  const parent = locked.find((c) => c.sscc === sscc);
  if (parent === undefined) throw new NotFoundError(`container ${sscc} not found`);
  return { parent, children: locked.filter((c) => c.sscc !== sscc) };
}

const refusalText: Record<PackRefusal, string> = {
  unknown: 'names no unit or container of this brand',
  not_commissioned: 'is not commissioned',
  already_packed: 'is in a container already',
  decommissioned: 'is decommissioned',
  cycle: 'would be packed inside itself',
  too_deep: "would nest containers deeper than the brand's max_depth",
};

/** What a captured pack or unpack moved, as its event is stored. */
export interface CapturedItems {
  readonly children: readonly ContainerRecord[];
  readonly units: readonly { readonly mintBatchId: string; readonly seq: number; readonly serial: string; readonly epc: string }[];
}

/** Packs inside the caller's transaction: checks every item under its lock, then packs all of them or throws naming each one refused. */
async function packIn(ctx: UseCaseContext, em: Em, op: OpInTransaction): Promise<ContainerOpResult> {
  const { brandId } = op;
  const now = ctx.clock();
  const { parent, children } = await lockParentAndChildren(em, brandId, op.sscc, op.ssccs);
  const owners = op.partnerId === null ? null : await containerPartners(em, brandId, [parent.id, ...children.map((c) => c.id)]);
  if (owners !== null && owners.get(parent.id) !== op.partnerId) throw new ForbiddenError(notPartnersContainer(parent.sscc));
  checkPackParent(parent.sscc, parent.state);
  const config = await readBrandContainerConfig(em, brandId);
  const maxDepth = config?.maxDepth ?? defaultContainerMaxDepth;
  const unknown: FieldViolation[] = [];
  const refused: string[] = [];
  const bySscc = new Map(children.map((c) => [c.sscc, c]));
  op.ssccs.forEach((s, i) => {
    if (!bySscc.has(s)) unknown.push({ field: op.at('ssccs', i), message: refusalText.unknown });
  });
  if (children.length > 0) {
    const ancestors = await ancestorsOf(em, brandId, parent.id);
    const heights = await heightsOf(
      em,
      brandId,
      children.map((c) => c.id),
    );
    for (const c of children) {
      const refusal = containerPackRefusal(
        { id: c.id, state: c.state, parentId: c.parentId, height: heights.get(c.id) ?? 1 },
        { id: parent.id, ancestors },
        maxDepth,
      );
      if (refusal !== null) refused.push(`container ${c.sscc} ${refusalText[refusal]}${refusal === 'too_deep' ? ` (${maxDepth})` : ''}`);
    }
  }
  const units = await lockUnitsForMove(em, brandId, { serials: op.serials });
  const found = new Set(units.map((u) => u.serial));
  op.serials.forEach((s, i) => {
    if (!found.has(s)) unknown.push({ field: op.at('serials', i), message: refusalText.unknown });
  });
  if (unknown.length > 0) throw new InvalidInputError(unknown);
  if (owners !== null) {
    const unitOwners = await readUnitPartners(em, brandId, units);
    const foreign = [
      ...children.filter((c) => owners.get(c.id) !== op.partnerId).map((c) => `container ${c.sscc} is not this partner's`),
      ...units
        .filter((u) => unitOwners.get(`${u.mintBatchId}/${u.seq}`) !== op.partnerId)
        .map((u) => `serial ${u.serial} is not in this partner's allocation (not_allocated)`),
    ];
    if (foreign.length > 0) {
      throw new ForbiddenError(
        `cannot pack into container ${parent.sscc}: ${foreign.slice(0, 20).join('; ')}${foreign.length > 20 ? `; and ${foreign.length - 20} more` : ''}`,
      );
    }
  }
  const packedIn = await containersOfUnits(em, brandId, units);
  for (const u of units) {
    const refusal = unitPackRefusal(u.state, u.batchVoided, packedIn.get(`${u.mintBatchId}/${u.seq}`) ?? null);
    if (refusal !== null)
      refused.push(
        `serial ${u.serial} ${refusalText[refusal]}${refusal === 'not_commissioned' ? ` (it is ${u.batchVoided ? 'of a voided batch' : u.state})` : ''}`,
      );
  }
  if (refused.length > 0) {
    throw new IllegalStateError(
      `cannot pack into container ${parent.sscc}: ${refused.slice(0, 20).join('; ')}${refused.length > 20 ? `; and ${refused.length - 20} more` : ''}`,
    );
  }
  if (
    !(await insertContainerOp(em, {
      brandId,
      id: op.opId,
      idempotencyKey: op.idempotencyKey,
      requestHash: op.requestHash,
      op: 'pack',
      containerId: parent.id,
      units: units.length,
      containers: children.length,
      actor: op.actorId,
      at: now,
    }))
  )
    throw new ConflictError(`idempotency_key ${JSON.stringify(op.idempotencyKey)} was used concurrently`);
  // The compare-and-set: every item must still be in no container.
  if (
    (await packUnits(em, brandId, parent.id, units, now)) !== units.length ||
    (await packContainers(
      em,
      brandId,
      parent.id,
      children.map((c) => c.id),
      now,
    )) !== children.length
  ) {
    throw new ConflictError(`container ${parent.sscc}: an item was packed concurrently`);
  }
  const childEpcs = [...children.map((c) => c.epc), ...units.map((u) => u.epc)];
  await insertEpcisEvents(em, [
    op.epcis?.(parent, { children, units }) ?? { ...aggregationEvent(brandId, op.opId, 'pack', parent, childEpcs, now), partnerId: op.partnerId },
  ]);
  await appendEvents(em, now, [opEvent(brandId, 'container_packed', op, parent, units.length, children.length)]);
  return { opId: op.opId, sscc: parent.sscc, units: units.length, containers: children.length, replayed: false };
}

/** Unpacks inside the caller's transaction: every named item must be in the container; none named: everything in it. */
async function unpackIn(ctx: UseCaseContext, em: Em, op: OpInTransaction): Promise<ContainerOpResult> {
  const { brandId } = op;
  const now = ctx.clock();
  const parent = await findContainerBySscc(em, brandId, op.sscc, true);
  if (parent === null) throw new NotFoundError(`container ${op.sscc} not found`);
  if (op.partnerId !== null && (await containerPartners(em, brandId, [parent.id])).get(parent.id) !== op.partnerId)
    throw new ForbiddenError(notPartnersContainer(parent.sscc));
  const all = op.serials.length === 0 && op.ssccs.length === 0;
  const units = await unpackUnits(em, brandId, parent.id, all ? null : op.serials);
  const children = all || op.ssccs.length > 0 ? await unpackContainers(em, brandId, parent.id, all ? null : op.ssccs, now) : [];
  if (!all) {
    const gotUnits = new Set(units.map((u) => u.serial));
    const gotContainers = new Set(children.map((c) => c.sscc));
    const missing: FieldViolation[] = [];
    op.serials.forEach((s, i) => {
      if (!gotUnits.has(s)) missing.push({ field: op.at('serials', i), message: `is not in container ${parent.sscc}` });
    });
    op.ssccs.forEach((s, i) => {
      if (!gotContainers.has(s)) missing.push({ field: op.at('ssccs', i), message: `is not in container ${parent.sscc}` });
    });
    if (missing.length > 0)
      throw new IllegalStateError(
        `cannot unpack container ${parent.sscc}: ${missing
          .slice(0, 20)
          .map((m) => `${m.field} ${m.message}`)
          .join('; ')}`,
      );
  }
  if (
    !(await insertContainerOp(em, {
      brandId,
      id: op.opId,
      idempotencyKey: op.idempotencyKey,
      requestHash: op.requestHash,
      op: 'unpack',
      containerId: parent.id,
      units: units.length,
      containers: children.length,
      actor: op.actorId,
      at: now,
    }))
  )
    throw new ConflictError(`idempotency_key ${JSON.stringify(op.idempotencyKey)} was used concurrently`);
  const childEpcs = [...children.map((c) => c.epc), ...units.map((u) => u.epc)];
  if (childEpcs.length > 0 || op.epcis !== undefined) {
    await insertEpcisEvents(em, [
      op.epcis?.(parent, { children, units }) ?? { ...aggregationEvent(brandId, op.opId, 'unpack', parent, childEpcs, now), partnerId: op.partnerId },
    ]);
    await appendEvents(em, now, [
      opEvent(
        brandId,
        'container_unpacked',
        { ...op, serials: units.map((u) => u.serial), ssccs: children.map((c) => c.sscc) },
        parent,
        units.length,
        children.length,
      ),
    ]);
  }
  return { opId: op.opId, sscc: parent.sscc, units: units.length, containers: children.length, replayed: false };
}

const notPartnersContainer = (sscc: string) => `container ${sscc} is not this partner's: a partner packs and unpacks only the containers minted under its keys`;

function opEvent(
  brandId: string,
  eventType: 'container_packed' | 'container_unpacked',
  op: Pick<OpInTransaction, 'opId' | 'actorId' | 'serials' | 'ssccs'>,
  parent: ContainerRecord,
  units: number,
  containers: number,
) {
  return {
    brandId,
    eventType,
    entityType: 'container' as const,
    entityId: parent.sscc,
    actor: op.actorId,
    payload: { op_id: op.opId, units, containers, serials: op.serials.slice(0, eventItems), ssccs: op.ssccs.slice(0, eventItems) },
  };
}

/** The EPCIS 2.0 AggregationEvent of a pack (ADD, packing) or unpack (DELETE, unpacking): the parent's URI and the children's. */
export function aggregationEvent(
  brandId: string,
  opId: string,
  op: 'pack' | 'unpack',
  parent: ContainerRecord,
  childEpcs: readonly string[],
  at: Date,
): NewEpcisEvent {
  const vocab = aggregationVocabulary(op);
  const id = derivedUuid(`${opId}/${op}`);
  return {
    brandId,
    id,
    moveId: null,
    eventType: 'AggregationEvent',
    eventTime: at,
    recordTime: at,
    bizStep: vocab.bizStep,
    disposition: vocab.disposition,
    epcs: [parent.epc, ...childEpcs],
    body: {
      type: 'AggregationEvent',
      eventID: `urn:uuid:${id}`,
      eventTime: at.toISOString(),
      eventTimeZoneOffset: '+00:00',
      recordTime: at.toISOString(),
      parentID: parent.epc,
      childEPCs: [...childEpcs],
      action: vocab.action,
      bizStep: vocab.bizStep,
      disposition: vocab.disposition,
    },
  };
}

async function runOp(ctx: UseCaseContext, actor: Actor, op: 'pack' | 'unpack', input: ContainerOpInput): Promise<ContainerOpResult> {
  const serials = [...new Set(input.serials)];
  const ssccs = [...new Set(input.ssccs)];
  const v: FieldViolation[] = [
    ...ssccViolations(input.sscc, 'sscc'),
    ...itemViolations({ serials, ssccs }, input.sscc, op === 'unpack'),
    ...keyViolations(input.idempotencyKey),
  ];
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId } = input;
  const key = storedKey(actor, input.idempotencyKey);
  const requestHash = requestFingerprint({ op, sscc: input.sscc, serials: [...serials].sort(), ssccs: [...ssccs].sort() });
  const replay = async (): Promise<ContainerOpResult | null> => {
    const known = await findContainerOpByKey(unitOfWork(ctx.db), brandId, key);
    if (known === null) return null;
    if (known.requestHash !== requestHash)
      throw new IdempotencyKeyReusedError(`idempotency_key ${JSON.stringify(input.idempotencyKey)} was used for another request`);
    return { opId: known.id, sscc: input.sscc, units: known.units, containers: known.containers, replayed: true };
  };
  const known = await replay();
  if (known !== null) return known;
  try {
    return await transaction(ctx.db, (em) => {
      const args: OpInTransaction = {
        brandId,
        sscc: input.sscc,
        serials,
        ssccs,
        opId: randomUUID(),
        idempotencyKey: key,
        requestHash,
        actorId: actor.id,
        partnerId: actor.partnerId ?? null,
        at: (kind, i) => `${kind}[${i}]`,
      };
      return op === 'pack' ? packIn(ctx, em, args) : unpackIn(ctx, em, args);
    });
  } catch (error) {
    // A concurrent request under the same key won: answer it.
    if (error instanceof ConflictError) {
      const raced = await replay();
      if (raced !== null) return raced;
    }
    throw error;
  }
}

/**
 * Packs commissioned units (by serial) and containers (by SSCC) into the brand's container `sscc`,
 * all or nothing, under their row locks: a unit not commissioned, anything already in a container,
 * a decommissioned container, a cycle or nesting deeper than the brand's max_depth refuses the
 * whole request (IllegalStateError naming each item and why); a serial or SSCC the brand does not
 * have is InvalidInputError naming its field (another brand's are reported so, never confirmed).
 * Of two concurrent packs of one item exactly one succeeds. Writes the EPCIS AggregationEvent
 * (ADD, packing) and a container_packed event. Idempotent by key. A partner key packs only units
 * allocated to it and containers it minted, into a container it minted (ForbiddenError naming each
 * item otherwise; see the rule above).
 */
export function packContainer(ctx: UseCaseContext, actor: Actor, input: ContainerOpInput): Promise<ContainerOpResult> {
  return runOp(ctx, actor, 'pack', input);
}

/**
 * Takes the named units and containers out of the brand's container `sscc` (none named: everything
 * directly in it), all or nothing: an item not in it is IllegalStateError naming it. Writes the EPCIS
 * AggregationEvent (DELETE, unpacking) and a container_unpacked event. Idempotent by key. A partner
 * key unpacks only a container it minted (ForbiddenError otherwise).
 */
export function unpackContainer(ctx: UseCaseContext, actor: Actor, input: ContainerOpInput): Promise<ContainerOpResult> {
  return runOp(ctx, actor, 'unpack', input);
}

/** A container as the brand sees it. */
export interface ContainerView {
  readonly sscc: string;
  readonly level: string;
  readonly uri: string;
  readonly state: ContainerState;
  readonly reason: DecommissionReason | null;
  /** The SSCC of the container it is in; null: none. */
  readonly parentSscc: string | null;
  /** Containers and units directly in it. */
  readonly containerCount: number;
  readonly unitCount: number;
  readonly createdAt: Date;
}

/** A page of a container's contents. */
export interface ContentsView {
  readonly containers: readonly { readonly sscc: string; readonly level: string; readonly uri: string; readonly state: ContainerState }[];
  readonly units: readonly { readonly serial: string; readonly uri: string }[];
  /** Cursor of the next page; null on the last. */
  readonly nextCursor: string | null;
}

async function viewOf(em: Em, brandId: string, c: ContainerRecord): Promise<ContainerView> {
  const counts = await countContents(em, brandId, c.id);
  const parentSscc = c.parentId === null ? null : await ssccOfContainer(em, brandId, c.parentId);
  return {
    sscc: c.sscc,
    level: c.level,
    uri: c.epc,
    state: c.state,
    reason: c.reason,
    parentSscc,
    containerCount: counts.containers,
    unitCount: counts.units,
    createdAt: c.createdAt,
  };
}

function parseContentsCursor(cursor: string | null): ContentsCursor | null {
  if (cursor === null || cursor === '') return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: string; b?: string; q?: number };
    if (typeof parsed.s === 'string' && isSscc(parsed.s)) return { sscc: parsed.s };
    if (typeof parsed.b === 'string' && /^[0-9a-f-]{36}$/.test(parsed.b) && Number.isInteger(parsed.q)) return { mintBatchId: parsed.b, seq: parsed.q! };
  } catch {
    /* refused below */
  }
  throw new InvalidInputError([{ field: 'cursor', message: 'is not a cursor this service issued' }]);
}

/**
 * The brand's container `sscc` with a page of its contents (containers by SSCC, then units), for
 * the brand and, for the containers it minted, a partner (`partnerId`). Unknown, another brand's or,
 * for a partner, another's: NotFoundError.
 */
export async function getContainer(
  ctx: UseCaseContext,
  brandId: string,
  sscc: string,
  page: { readonly limit: number | null; readonly cursor: string | null },
  partnerId: string | null = null,
): Promise<{ container: ContainerView; contents: ContentsView }> {
  const v = ssccViolations(sscc, 'sscc');
  const limit = page.limit ?? defaultContentsPage;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxContentsPage)
    v.push({ field: 'limit', message: `must be a whole number from 1 to ${maxContentsPage}` });
  if (v.length > 0) throw new InvalidInputError(v);
  const after = parseContentsCursor(page.cursor);
  const em = unitOfWork(ctx.db);
  const c = await findContainerBySscc(em, brandId, sscc);
  if (c === null || (partnerId !== null && (await containerPartners(em, brandId, [c.id])).get(c.id) !== partnerId))
    throw new NotFoundError(`container ${sscc} not found`);
  const found = await containerContents(em, brandId, c.id, after, limit);
  const items: ({ kind: 'c'; c: ContainerRecord } | { kind: 'u'; u: PackedUnit })[] = [
    ...found.containers.map((x) => ({ kind: 'c' as const, c: x })),
    ...found.units.map((u) => ({ kind: 'u' as const, u })),
  ];
  const shown = items.slice(0, limit);
  const last = shown.at(-1);
  const nextCursor =
    items.length > limit && last !== undefined
      ? Buffer.from(JSON.stringify(last.kind === 'c' ? { s: last.c.sscc } : { b: last.u.mintBatchId, q: last.u.seq })).toString('base64url')
      : null;
  return {
    container: await viewOf(em, brandId, c),
    contents: {
      containers: shown.flatMap((x) => (x.kind === 'c' ? [{ sscc: x.c.sscc, level: x.c.level, uri: x.c.epc, state: x.c.state }] : [])),
      units: shown.flatMap((x) => (x.kind === 'u' ? [{ serial: x.u.serial, uri: x.u.epc }] : [])),
      nextCursor,
    },
  };
}

/** What the public resolver says of a container: that it exists and its state, never its contents. */
export interface PublicContainer {
  readonly brandId: string;
  readonly brand: { readonly name: string; readonly slug: string };
  readonly sscc: string;
  readonly level: string;
  readonly state: ContainerState;
  /** Its decommissioning reason where public (publicReasonOf: a theft is not), as a unit's answers show theirs. */
  readonly reason: DecommissionReason | null;
}

/**
 * The container `sscc` of the brand at `slug` as the public resolver answers it; null for an
 * unknown brand or SSCC, or another brand's (the same 404 as a never-issued serial). Its reason is
 * the public one, by the rule of a unit's answers: a stolen container is only out of circulation.
 */
export async function resolveContainer(ctx: UseCaseContext, slug: string, sscc: string): Promise<PublicContainer | null> {
  if (!isSscc(sscc)) return null;
  const em = unitOfWork(ctx.db);
  const brand = await findBrandIdBySlug(em, slug);
  if (brand === null) return null;
  const c = await findContainerBySscc(em, brand.id, sscc);
  return c === null
    ? null
    : { brandId: brand.id, brand: { name: brand.name, slug }, sscc: c.sscc, level: c.level, state: c.state, reason: publicReasonOf(c.reason) };
}

/** What a move on a container reaches: its tree of containers, locked, and how many units are inside them. */
export interface ContainerMoveScope {
  readonly containerId: string;
  readonly tree: readonly ContainerRecord[];
  /** Units inside the tree's containers when it was read. */
  readonly units: number;
}

/**
 * The brand's container `sscc` with every container inside it, through every level, locked until
 * the transaction ends, and the count of units inside them: the scope of a move on a container,
 * read when it is requested. Unknown or another brand's: NotFoundError.
 */
export async function containerMoveScope(em: Em, brandId: string, sscc: string): Promise<ContainerMoveScope> {
  const root = await findContainerBySscc(em, brandId, sscc);
  if (root === null) throw new NotFoundError(`container ${sscc} not found`);
  const found = await containerTree(em, brandId, root.id);
  // Lock the tree (in id order, as packs do), then read it again: a pack into any of its
  // containers has committed before this, or waits for the request.
  await findContainersBySscc(
    em,
    brandId,
    found.map((c) => c.sscc),
    true,
  );
  const tree = await containerTree(em, brandId, root.id);
  const counts = await countUnitsInContainers(
    em,
    brandId,
    tree.map((c) => c.id),
  );
  return { containerId: root.id, tree, units: [...counts.values()].reduce((a, b) => a + b, 0) };
}

/** Where a move on a container goes on: the position in its tree's ids, and in a container larger than a chunk, the last unit moved. */
export interface ContainerCursor {
  readonly pos: number;
  readonly after: { readonly mintBatchId: string; readonly seq: number } | null;
}

/**
 * The units of a container move's next chunk, in the caller's transaction, with the containers
 * they are read from share-locked (a pack or unpack of them waits for the chunk): whole containers
 * of the tree (`ids`, in id order) from the cursor on while they hold at most `chunk` units
 * between them, or else a page of `chunk` units of the one container larger than that. Returns the
 * units (read as they are packed now: a unit unpacked before its chunk is not moved) and the
 * cursor after them, null when the tree is done.
 */
export async function containerMoveChunk(
  em: Em,
  brandId: string,
  ids: readonly string[],
  cursor: ContainerCursor,
  chunk: number,
): Promise<{ units: PackedKey[]; next: ContainerCursor | null }> {
  const { pos, after } = cursor;
  const nextAt = (p: number): ContainerCursor | null => (p >= ids.length ? null : { pos: p, after: null });
  if (pos >= ids.length) return { units: [], next: null };
  if (after === null) {
    const window = ids.slice(pos, pos + chunk);
    const counts = await countUnitsInContainers(em, brandId, window);
    const whole: string[] = [];
    let n = 0;
    for (const id of window) {
      const k = counts.get(id) ?? 0;
      if (n + k > chunk) break;
      whole.push(id);
      n += k;
    }
    if (whole.length > 0) {
      await lockContainersForShare(em, brandId, whole);
      return { units: await unitKeysInContainers(em, brandId, whole), next: nextAt(pos + whole.length) };
    }
  }
  const id = ids[pos]!;
  await lockContainersForShare(em, brandId, [id]);
  const units = await unitKeysInContainers(em, brandId, [id], { after, limit: chunk });
  const last = units.at(-1);
  return { units, next: units.length < chunk || last === undefined ? nextAt(pos + 1) : { pos, after: { mintBatchId: last.mintBatchId, seq: last.seq } } };
}

/**
 * The containers' side of a move on a container, inside the move's transaction: decommissioning
 * takes every commissioned container of the tree out of circulation with the move's reason (a
 * compare-and-set on each one's state), reactivating puts back those whose reason allows it; other
 * moves leave containers as they are. Writes one EPCIS ObjectEvent naming the containers moved,
 * with the move's vocabulary. Returns how many moved.
 */
export async function moveContainersOf(
  em: Em,
  now: Date,
  c: { readonly brandId: string; readonly moveId: string; readonly move: SerialMove; readonly tree: readonly ContainerRecord[] },
): Promise<number> {
  const { brandId, move } = c;
  const byTarget = new Map<ContainerState, ContainerRecord[]>();
  for (const container of c.tree) {
    const to = containerStateAfter(move.action, container.state, container.reason, reactivatableReasons);
    if (to === null) continue;
    const list = byTarget.get(to) ?? [];
    list.push(container);
    byTarget.set(to, list);
  }
  let moved = 0;
  for (const [to, list] of byTarget) {
    const from: ContainerState = to === 'decommissioned' ? 'commissioned' : 'decommissioned';
    const changedRows = await moveContainerStates(
      em,
      brandId,
      list.map((x) => x.id),
      from,
      to,
      to === 'decommissioned' ? move.reason : null,
      now,
    );
    if (changedRows.length === 0) continue;
    moved += changedRows.length;
    const vocab = epcisVocabularyOf(move, from === 'commissioned' ? 'commissioned' : 'decommissioned');
    const id = derivedUuid(`${c.moveId}/containers/${to}`);
    const epcs = changedRows.map((x) => x.epc);
    await insertEpcisEvents(em, [
      {
        brandId,
        id,
        moveId: c.moveId,
        eventType: 'ObjectEvent',
        eventTime: now,
        recordTime: now,
        bizStep: vocab.bizStep,
        disposition: vocab.disposition,
        epcs,
        body: {
          type: 'ObjectEvent',
          eventID: `urn:uuid:${id}`,
          eventTime: now.toISOString(),
          eventTimeZoneOffset: '+00:00',
          recordTime: now.toISOString(),
          epcList: epcs,
          action: vocab.action,
          bizStep: vocab.bizStep,
          disposition: vocab.disposition,
        },
      },
    ]);
  }
  return moved;
}

/** A captured AggregationEvent, checked. */
export interface CapturedAggregation {
  readonly op: 'pack' | 'unpack';
  readonly sscc: string;
  readonly serials: readonly string[];
  readonly ssccs: readonly string[];
  /** Index in `childEPCs` of each serial and SSCC, for errors. */
  readonly serialIndex: readonly number[];
  readonly ssccIndex: readonly number[];
}

/**
 * Reads a captured AggregationEvent: packing (ADD) or unpacking (DELETE), its parentID a
 * container's EPC (GS1 Digital Link `…/00/{sscc}` or `urn:epc:id:sscc:…`), its childEPCs units' or
 * containers' EPCs (an unpacking may list none: everything). Violations name `{at}.field`;
 * `serialOf` reads a unit's EPC.
 */
export function readCapturedAggregation(
  event: Record<string, unknown>,
  at: string,
  bizStep: string,
  serialOf: (epc: string) => string | null,
  v: FieldViolation[],
): CapturedAggregation | null {
  const action = String(event['action']);
  const op = bizStep === 'packing' && action === 'ADD' ? 'pack' : bizStep === 'unpacking' && action === 'DELETE' ? 'unpack' : null;
  if (op === null) {
    v.push({ field: `${at}.bizStep`, message: `${action} ${bizStep} is no aggregation this service applies (ADD packing or DELETE unpacking)` });
    return null;
  }
  const sscc = typeof event['parentID'] === 'string' ? ssccOfEpc(event['parentID']) : null;
  if (sscc === null)
    v.push({ field: `${at}.parentID`, message: 'must name a container: a GS1 Digital Link URI (…/00/{sscc}) or an SSCC URN (urn:epc:id:sscc:…)' });
  const children = Array.isArray(event['childEPCs']) ? (event['childEPCs'] as unknown[]) : [];
  if (op === 'pack' && children.length === 0) v.push({ field: `${at}.childEPCs`, message: 'must name the units and containers packed' });
  const serials: string[] = [];
  const ssccs: string[] = [];
  const serialIndex: number[] = [];
  const ssccIndex: number[] = [];
  children.forEach((epc, i) => {
    const child = typeof epc === 'string' ? ssccOfEpc(epc) : null;
    const serial = typeof epc === 'string' && child === null ? serialOf(epc) : null;
    if (child !== null) {
      ssccs.push(child);
      ssccIndex.push(i);
    } else if (serial !== null) {
      serials.push(serial);
      serialIndex.push(i);
    } else {
      v.push({
        field: `${at}.childEPCs[${i}]`,
        message: 'must name a unit (…/01/{gtin}/21/{serial}, …/u/{serial} or urn:epc:id:sgtin:…) or a container (…/00/{sscc} or urn:epc:id:sscc:…)',
      });
    }
  });
  return sscc === null ? null : { op, sscc, serials, ssccs, serialIndex, ssccIndex };
}

/**
 * Applies a captured AggregationEvent inside the capture's transaction, exactly as PackContainer or
 * UnpackContainer would (same checks, a partner's included; a unit commissioned by an earlier event
 * of the same document counts as commissioned), storing the event `event` builds from what it did.
 * Its idempotency key is `epcis:{event id}`.
 */
export async function applyCapturedAggregation(
  ctx: UseCaseContext,
  em: Em,
  c: {
    readonly brandId: string;
    readonly actorId: string | null;
    readonly partnerId: string | null;
    readonly eventId: string;
    readonly index: number;
    readonly aggregation: CapturedAggregation;
    readonly event: (parent: ContainerRecord, items: CapturedItems) => NewEpcisEvent;
  },
): Promise<ContainerOpResult> {
  const a = c.aggregation;
  if (a.serials.length + a.ssccs.length > maxPackItems)
    throw new InvalidInputError([{ field: `epcisBody.eventList[${c.index}].childEPCs`, message: `must name at most ${maxPackItems} EPCs` }]);
  const op: OpInTransaction = {
    brandId: c.brandId,
    sscc: a.sscc,
    serials: a.serials,
    ssccs: a.ssccs,
    opId: randomUUID(),
    idempotencyKey: `epcis:${c.eventId}`,
    requestHash: c.eventId,
    actorId: c.actorId,
    partnerId: c.partnerId,
    at: (kind, i) => `epcisBody.eventList[${c.index}].childEPCs[${(kind === 'serials' ? a.serialIndex : a.ssccIndex)[i]}]`,
    epcis: c.event,
  };
  return a.op === 'pack' ? packIn(ctx, em, op) : unpackIn(ctx, em, op);
}

/** A captured packing event (ADD packing) of a set {@link packCapturedSet} applies at once. */
export interface CapturedPack {
  readonly index: number;
  readonly eventId: string;
  readonly eventTime: Date;
  readonly aggregation: CapturedAggregation;
  /** The event to store, built from what the pack did. */
  readonly event: (parent: ContainerRecord, items: CapturedItems) => NewEpcisEvent;
}

/**
 * Applies captured packing events at once, inside the capture's transaction: a packaging line's
 * document of a thousand cases in a few statements instead of a dozen per event. The caller gives
 * events that name disjoint items (no container or unit named twice in the set, none as parent of
 * one event and child of another), so applying them together is applying them in order. Every
 * rule of {@link applyCapturedAggregation} holds, read for the whole set under the same locks
 * (the containers locked in id order, then the units): each parent and child container known, the
 * partner's own, the parent commissioned, each child container packable (not decommissioned, in
 * no container, no cycle, max_depth), each unit the brand's, allocated to the partner,
 * commissioned and in no container, and no event dated before the mint of a unit it names or
 * before the latest event recorded for an EPC it names. Then the compare-and-sets (units into
 * containers where in none, containers into parents where in none, one request row per event
 * under `epcis:{event id}`), the events and the audit events, each one statement for the set;
 * a compare-and-set that falls short (a concurrent pack or capture) is ConflictError.
 *
 * Returns null, having written nothing, when any event would be refused, or needs the rules an
 * event at a time (a container packed into a parent that is itself inside a container: the set's
 * packs could change its ancestors' depth): the caller then applies the events one by one, which
 * refuses with the errors it always gave.
 */
export async function packCapturedSet(
  ctx: UseCaseContext,
  em: Em,
  c: { readonly brandId: string; readonly actorId: string | null; readonly partnerId: string | null; readonly packs: readonly CapturedPack[] },
): Promise<{ units: number; containers: number } | null> {
  const { brandId, partnerId, packs } = c;
  const now = ctx.clock();
  const ssccs = packs.flatMap((p) => [p.aggregation.sscc, ...p.aggregation.ssccs]);
  const locked = await findContainersBySscc(em, brandId, ssccs, true);
  if (locked.length !== new Set(ssccs).size) return null;
  const bySscc = new Map(locked.map((x) => [x.sscc, x]));
  if (partnerId !== null) {
    const owners = await containerPartners(
      em,
      brandId,
      locked.map((x) => x.id),
    );
    if (locked.some((x) => owners.get(x.id) !== partnerId)) return null;
  }
  const nesting = packs.filter((p) => p.aggregation.ssccs.length > 0);
  if (packs.some((p) => bySscc.get(p.aggregation.sscc)!.state !== 'commissioned')) return null;
  if (nesting.length > 0) {
    if (nesting.some((p) => bySscc.get(p.aggregation.sscc)!.parentId !== null)) return null;
    const maxDepth = (await readBrandContainerConfig(em, brandId))?.maxDepth ?? defaultContainerMaxDepth;
    const children = nesting.flatMap((p) => p.aggregation.ssccs.map((s) => ({ parent: bySscc.get(p.aggregation.sscc)!, child: bySscc.get(s)! })));
    const heights = await heightsOf(
      em,
      brandId,
      children.map((x) => x.child.id),
    );
    for (const { parent, child } of children) {
      const refusal = containerPackRefusal(
        { id: child.id, state: child.state, parentId: child.parentId, height: heights.get(child.id) ?? 1 },
        { id: parent.id, ancestors: [] },
        maxDepth,
      );
      if (refusal !== null) return null;
    }
  }
  const serials = packs.flatMap((p) => p.aggregation.serials);
  const units = await lockUnitsForMove(em, brandId, { serials });
  if (units.length !== serials.length) return null;
  if (partnerId !== null) {
    const owners = await readUnitPartners(em, brandId, units);
    if (units.some((u) => owners.get(`${u.mintBatchId}/${u.seq}`) !== partnerId)) return null;
  }
  const packedIn = await containersOfUnits(em, brandId, units);
  if (units.some((u) => unitPackRefusal(u.state, u.batchVoided, packedIn.get(`${u.mintBatchId}/${u.seq}`) ?? null) !== null)) return null;
  const earliest = new Date(Math.min(...packs.map((p) => p.eventTime.getTime())));
  const minted = await latestMintOf(em, brandId, units);
  if (minted !== null && earliest < minted.mintedAt) return null;
  const latest = await latestEventTimeNaming(em, brandId, [...locked.map((x) => x.epc), ...units.map((u) => u.epc)]);
  if (latest !== null && earliest < latest) return null;

  const bySerial = new Map(units.map((u) => [u.serial, u]));
  const byKey = (a: { mintBatchId: string; seq: number }, b: { mintBatchId: string; seq: number }) =>
    a.mintBatchId < b.mintBatchId ? -1 : a.mintBatchId > b.mintBatchId ? 1 : a.seq - b.seq;
  const ops = packs.map((p) => ({
    pack: p,
    opId: randomUUID(),
    parent: bySscc.get(p.aggregation.sscc)!,
    children: p.aggregation.ssccs.map((s) => bySscc.get(s)!).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    units: p.aggregation.serials.map((s) => bySerial.get(s)!).sort(byKey),
  }));
  const recorded = await insertContainerOps(
    em,
    ops.map((o) => ({
      brandId,
      id: o.opId,
      idempotencyKey: `epcis:${o.pack.eventId}`,
      requestHash: o.pack.eventId,
      op: 'pack' as const,
      containerId: o.parent.id,
      units: o.units.length,
      containers: o.children.length,
      actor: c.actorId,
      at: now,
    })),
  );
  if (recorded !== ops.length) throw new ConflictError('a captured packing event was applied concurrently');
  const unitRows = ops.flatMap((o) => o.units.map((u) => ({ containerId: o.parent.id, mintBatchId: u.mintBatchId, seq: u.seq })));
  const containerRows = ops.flatMap((o) => o.children.map((x) => ({ parentId: o.parent.id, id: x.id })));
  // The compare-and-set: every item must still be in no container.
  if (
    (await packUnitsInto(em, brandId, unitRows, now)) !== unitRows.length ||
    (await packContainersInto(em, brandId, containerRows, now)) !== containerRows.length
  )
    throw new ConflictError('an item of a captured packing event was packed concurrently');
  await insertEpcisEvents(
    em,
    ops.map((o) => o.pack.event(o.parent, { children: o.children, units: o.units })),
  );
  await appendEvents(
    em,
    now,
    ops.map((o) =>
      opEvent(
        brandId,
        'container_packed',
        { opId: o.opId, actorId: c.actorId, serials: o.pack.aggregation.serials, ssccs: o.pack.aggregation.ssccs },
        o.parent,
        o.units.length,
        o.children.length,
      ),
    ),
  );
  return { units: unitRows.length, containers: containerRows.length };
}

/**
 * Whether the caller presenting `credentials` may see the contents of the brand's container
 * `sscc` through the resolver: a session or API key of the brand with mint:read, or a key of the
 * partner that minted the container. No credentials, credentials of another brand, or another
 * partner's key: false (the public answer, never an error that would confirm the brand).
 * Credentials that do not verify: UnauthenticatedError.
 */
export async function mayReadContainerContents(ctx: UseCaseContext, credentials: Credentials, brandId: string, sscc: string): Promise<boolean> {
  if (credentials.bearer === null && credentials.apiKey === null) return false;
  const authenticated = await authenticate(ctx, credentials);
  try {
    const caller = await authorizeAuthenticated(ctx, authenticated, brandId, 'mint:read', { partnerAccess: true });
    if (caller.partnerId === null) return true;
    const em = unitOfWork(ctx.db);
    const c = await findContainerBySscc(em, brandId, sscc);
    return c !== null && (await containerPartners(em, brandId, [c.id])).get(c.id) === caller.partnerId;
  } catch (error) {
    if (error instanceof ForbiddenError) return false;
    throw error;
  }
}
