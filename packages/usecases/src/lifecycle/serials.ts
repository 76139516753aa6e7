import { randomUUID } from 'node:crypto';
import {
  appendEvents,
  countUnusedAllocated,
  unusedAllocatedUnits,
  type AllocationCursor,
  bumpKpis,
  claimRunningSerialMove,
  findSerialMove,
  findSerialMoveByKey,
  insertEpcisEvents,
  insertSerialMove,
  lockUnitsForMove,
  moveUnitRange,
  readBatchState,
  readUnitPartners,
  readSerialMoveRefusals,
  recordSerialMoveChunk,
  recordSerialMoveFailure,
  writeSerialMove,
  type Em,
  type NewEpcisEvent,
  type RangeMoveEvent,
  type SerialMoveRecord,
  type StoredRefusal,
  type UnitForMove,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  activeDelta,
  attemptsExhausted,
  decommissionReasons,
  epcisVocabularyOf,
  ForbiddenError,
  IdempotencyKeyReusedError,
  IllegalStateError,
  InvalidInputError,
  isPartnerAction,
  isUuid,
  moveOneSerial,
  NotFoundError,
  partnerActions,
  refusalOf,
  retryDelayMs,
  serialActions,
  serialMoveOf,
  serialMoveRetry,
  ssccViolations,
  type DecommissionReason,
  type FieldViolation,
  type NewEvent,
  type SerialAction,
  type SerialMove,
  type SerialRefusal,
  type SerialState,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { requestFingerprint } from '../idempotency.ts';
import { containerMoveChunk, containerMoveScope, moveContainersOf, type ContainerCursor, type ContainerMoveScope } from './containers.ts';
import { derivedUuid } from './derived-uuid.ts';

export { derivedUuid };

/** Most serials one request may list. */
export const maxMoveSerials = 10_000;
/** Refused units a report lists by default and at most (a page: the rest by `nextPageToken`); a list move's refusals fit one page. */
export const maxRefusalPage = 10_000;
/** Longest idempotency key. */
const maxKeyLength = 200;
/** Serials named in a mint_units_moved event; the rest are counted. */
const eventSerials = 100;
/** The JSON-LD context EPCIS 2.0 events name. */
const epcisContext = 'https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld';

/**
 * What a move applies to: listed serials of the brand, a batch (optionally a seq range of it), or a
 * container by SSCC (every unit inside it, through every level; see {@link moveContainersOf} for
 * the containers themselves).
 */
export type SerialMoveTarget =
  | { readonly serials: readonly string[] }
  | { readonly mintBatchId: string; readonly fromSeq?: number | null; readonly toSeq?: number | null }
  | { readonly container: string }
  /** Every unit of the calling partner's allocation still unused (issued): its return (see {@link returnUnusedSerials}). */
  | { readonly unusedAllocation: true };

/** Parameters of {@link moveSerials}. */
export interface MoveSerialsInput {
  readonly brandId: string;
  readonly action: SerialAction;
  /** Required for decommission, refused otherwise. */
  readonly reason: DecommissionReason | null;
  readonly target: SerialMoveTarget;
  /** The caller's key: a repeat with the same key and request answers the first move and moves nothing. */
  readonly idempotencyKey: string;
}

/** One unit a move refused, and why. */
export interface RefusedUnit {
  readonly serial: string | null;
  readonly mintBatchId: string | null;
  readonly seq: number | null;
  readonly refusal: SerialRefusal;
  /** The state the unit is in (wrong_state, reason_final); null for an unknown unit. */
  readonly state: SerialState | null;
  /** Its decommissioning reason, when it has one. */
  readonly reason: DecommissionReason | null;
}

/** A move as the caller sees it. */
export interface SerialMoveReport {
  readonly moveId: string;
  readonly action: SerialAction;
  readonly reason: DecommissionReason | null;
  /**
   * running while chunks remain (the executor continues it), done when every unit is accounted
   * for, failed when its next chunk failed every attempt (`error` says why; the chunks before it
   * stay moved).
   */
  readonly status: 'running' | 'done' | 'failed';
  readonly total: number;
  readonly moved: number;
  readonly refused: number;
  /** A page of the refused units, in the order the chunks refused them (every one when `nextPageToken` is null). */
  readonly refusals: readonly RefusedUnit[];
  /** Where the next page of refusals starts (GetSerialMove's `page_token`); null on the last page. */
  readonly nextPageToken: string | null;
  /** Why the move failed; null unless failed. */
  readonly error: string | null;
  /** True when the key named an earlier move: this call moved nothing. */
  readonly replayed: boolean;
}

/** Which page of a move's refusals a report lists. */
export interface RefusalPage {
  /** At most this many refused units; default and most {@link maxRefusalPage}. */
  readonly pageSize?: number | null;
  /** A report's `nextPageToken`: the page after it; absent: the first page. */
  readonly pageToken?: string | null;
}

function pageViolations(page: RefusalPage): FieldViolation[] {
  const v: FieldViolation[] = [];
  const size = page.pageSize ?? null;
  if (size !== null && (!Number.isInteger(size) || size < 1 || size > maxRefusalPage))
    v.push({ field: 'page_size', message: `must be 1 to ${maxRefusalPage}` });
  const token = page.pageToken ?? null;
  if (token !== null && token !== '' && !/^[0-9]{1,10}$/.test(token)) v.push({ field: 'page_token', message: 'must be a next_page_token of this move' });
  return v;
}

/** The move as the caller sees it, with one page of its refusals read from its report's rows. */
async function report(em: Em, brandId: string, m: SerialMoveRecord, replayed: boolean, page: RefusalPage = {}): Promise<SerialMoveReport> {
  const size = page.pageSize ?? maxRefusalPage;
  const after = page.pageToken === undefined || page.pageToken === null || page.pageToken === '' ? -1 : Number(page.pageToken);
  const found = m.refused === 0 ? [] : await readSerialMoveRefusals(em, brandId, m.id, after, size);
  const last = found.at(-1);
  return {
    moveId: m.id,
    action: m.action as SerialAction,
    reason: m.reason as DecommissionReason | null,
    status: m.status,
    total: m.total,
    moved: m.moved,
    refused: m.refused,
    replayed,
    refusals: found.map((r) => ({
      serial: r.serial,
      mintBatchId: r.mintBatchId,
      seq: r.seq,
      refusal: r.refusal as SerialRefusal,
      state: r.state as SerialState | null,
      reason: r.reason as DecommissionReason | null,
    })),
    nextPageToken: last !== undefined && found.length === size && last.ord + 1 < m.refused ? String(last.ord) : null,
    error: m.status === 'failed' ? m.error : null,
  };
}

function validate(input: MoveSerialsInput): FieldViolation[] {
  const v: FieldViolation[] = [];
  if (!serialActions.includes(input.action)) v.push({ field: 'action', message: `must be one of ${serialActions.join(', ')}` });
  if (input.action === 'decommission') {
    if (input.reason === null) v.push({ field: 'reason', message: 'is required to decommission' });
    else if (!decommissionReasons.includes(input.reason)) v.push({ field: 'reason', message: `must be one of ${decommissionReasons.join(', ')}` });
  } else if (input.reason !== null) {
    v.push({ field: 'reason', message: 'is only given to decommission' });
  }
  if (input.idempotencyKey.length === 0 || input.idempotencyKey.length > maxKeyLength) {
    v.push({ field: 'idempotency_key', message: `must be 1 to ${maxKeyLength} characters` });
  }
  const t = input.target;
  if ('serials' in t) {
    if (t.serials.length === 0 || t.serials.length > maxMoveSerials) v.push({ field: 'serials', message: `must hold 1 to ${maxMoveSerials} serials` });
    const bad = t.serials.findIndex((s) => !/^[0-9A-Za-z]{1,64}$/.test(s));
    if (bad !== -1) v.push({ field: `serials[${bad}]`, message: 'must be 1 to 64 letters or digits' });
  } else if ('container' in t) {
    v.push(...ssccViolations(t.container, 'container'));
  } else if ('unusedAllocation' in t) {
    if (input.action !== 'return') v.push({ field: 'action', message: "must be return for a partner's unused allocation" });
  } else {
    if (!isUuid(t.mintBatchId)) v.push({ field: 'range.mint_batch_id', message: 'must be a uuid' });
    const from = t.fromSeq ?? null;
    const to = t.toSeq ?? null;
    if (from !== null && (!Number.isInteger(from) || from < 1)) v.push({ field: 'range.from_seq', message: 'must be a whole number from 1' });
    if (to !== null && (!Number.isInteger(to) || to < 1)) v.push({ field: 'range.to_seq', message: 'must be a whole number from 1' });
    if (from !== null && to !== null && to < from) v.push({ field: 'range.to_seq', message: 'must not be below range.from_seq' });
  }
  return v;
}

/**
 * Moves serials of the brand along their lifecycle (encode, commission, scrap, decommission with a
 * reason, reactivate, return). Every unit is checked under its row lock: a unit in a state the
 * move cannot leave, unknown to the brand (another brand's serials are reported so, never
 * confirmed) or of a voided batch is refused and listed with its state; the others move.
 * A single listed serial that cannot move is IllegalStateError naming its state, and nothing is
 * recorded. Each chunk commits its units' states, active_tokens (exactly the units entering or
 * leaving circulation), a mint_units_moved event per batch (with webhooks) and the EPCIS 2.0
 * events of the moved units. A list is one chunk; a batch or seq range is chunked by
 * the context's `serialMoveChunk` (10,000 by default) and, with `runAll` false, left running for the executor after the
 * first. Idempotent by key: a repeat answers the move as it stands (replayed), another request
 * under a used key is IdempotencyKeyReusedError. A partner key (`actor.partnerId`) may only
 * encode, commission, scrap and return (ForbiddenError otherwise), moves only the units allocated
 * to it (the others are refused as `not_allocated`) and keeps its idempotency keys apart.
 */
export async function moveSerials(
  ctx: UseCaseContext,
  actor: Actor,
  input: MoveSerialsInput,
  options: { readonly runAll?: boolean } = {},
): Promise<SerialMoveReport> {
  const v = validate(input);
  if (v.length > 0) throw new InvalidInputError(v);
  const { brandId } = input;
  const partnerId = actor.partnerId ?? null;
  if (partnerId !== null && !isPartnerAction(input.action)) {
    throw new ForbiddenError(`a partner key may ${partnerActions.join(', ')} the serials allocated to it; ${input.action} is the brand's`);
  }
  const requestHash = requestFingerprint({
    action: input.action,
    reason: input.reason,
    target: input.target,
    ...(partnerId === null ? {} : { partner: partnerId }),
  });
  // A partner's keys live in a space of their own: they never meet the brand's or another partner's.
  const storedKey = partnerId === null ? input.idempotencyKey : `partner:${partnerId}:${input.idempotencyKey}`;
  const known = await findSerialMoveByKey(unitOfWork(ctx.db), brandId, storedKey);
  if (known !== null) return replay(ctx, brandId, known, requestHash, input.idempotencyKey);
  const t = input.target;
  let total: number;
  let nextSeq: number | null = null;
  let target: Record<string, unknown>;
  let scopeOf: ((em: Em) => Promise<ContainerMoveScope>) | null = null;
  if ('container' in t) {
    // Counted and moved in one transaction with the containers locked (see runChunk).
    total = 0;
    target = { container: t.container };
    scopeOf = (em) => containerMoveScope(em, brandId, t.container);
  } else if ('serials' in t) {
    const serials = [...new Set(t.serials)];
    total = serials.length;
    target = { serials };
  } else if ('unusedAllocation' in t) {
    if (partnerId === null) throw new ForbiddenError("only a partner key returns its allocation's unused serials");
    // Chunked by the executor through the allocation's units still issued; the count is theirs now.
    total = await countUnusedAllocated(unitOfWork(ctx.db), brandId, partnerId);
    target = { allocation: partnerId };
  } else {
    const batch = await readBatchState(unitOfWork(ctx.db), brandId, t.mintBatchId);
    if (batch === null) throw new NotFoundError(`mint batch ${t.mintBatchId} not found`);
    if (batch.identityMode !== 'serial') throw new IllegalStateError(`mint batch ${t.mintBatchId} has no serial units (identity mode ${batch.identityMode})`);
    const from = t.fromSeq ?? 1;
    const to = t.toSeq ?? batch.mintedQuantity;
    if (to < from) throw new IllegalStateError(`mint batch ${t.mintBatchId} has no units to move (${batch.mintedQuantity} minted)`);
    total = to - from + 1;
    nextSeq = from;
    target = { mint_batch_id: t.mintBatchId, from_seq: from, to_seq: to };
  }
  if (partnerId !== null) target = { ...target, partner_id: partnerId };
  const moveId = randomUUID();
  const first = await transaction(ctx.db, async (em) => {
    const scope = scopeOf === null ? undefined : await scopeOf(em);
    if (scope !== undefined) {
      total = scope.units;
      // The tree's containers in id order: every chunk share-locks those it reads in that order, as packs lock.
      target = { ...target, container_id: scope.containerId, tree: scope.tree.map((c) => c.id).sort() };
    }
    if (
      !(await insertSerialMove(em, {
        brandId,
        id: moveId,
        idempotencyKey: storedKey,
        requestHash,
        action: input.action,
        reason: input.reason,
        target,
        total,
        nextSeq,
        actor: actor.id,
        at: ctx.clock(),
      }))
    )
      return null;
    // A single serial that cannot move is an error naming its state, and the move is not kept.
    return runChunk(ctx, em, brandId, moveId, actor.id, { single: 'serials' in target && total === 1, ...(scope === undefined ? {} : { scope }) });
  });
  if (first === null) {
    const raced = await findSerialMoveByKey(unitOfWork(ctx.db), brandId, storedKey);
    if (raced === null) throw new Error('serial move key vanished');
    return replay(ctx, brandId, raced, requestHash, input.idempotencyKey);
  }
  let state = first;
  if (options.runAll === true) {
    while (state.status === 'running') state = (await continueSerialMove(ctx, brandId, moveId)) ?? state;
  }
  return report(unitOfWork(ctx.db), brandId, state, false);
}

/** Parameters of {@link returnUnusedSerials}. */
export interface ReturnUnusedSerialsInput {
  readonly brandId: string;
  /** The caller's key: a repeat answers the first return and moves nothing. */
  readonly idempotencyKey: string;
}

/**
 * A partner returns every unused serial of its allocation in one request (OPEN-SCS return): each
 * unit allocated to the calling partner key's partner that is still issued (never encoded,
 * commissioned or scrapped) moves to `returned`, a returned serial is never allocated or issued
 * again (its allocation row stays). The first chunk runs in the request, the executor runs the
 * rest, like a batch move; a unit that changed state meanwhile is refused with its state.
 * Idempotent by key within the partner's keys. A brand's key: ForbiddenError.
 */
export async function returnUnusedSerials(
  ctx: UseCaseContext,
  actor: Actor,
  input: ReturnUnusedSerialsInput,
  options: { readonly runAll?: boolean } = {},
): Promise<SerialMoveReport> {
  return moveSerials(
    ctx,
    actor,
    { brandId: input.brandId, action: 'return', reason: null, target: { unusedAllocation: true }, idempotencyKey: input.idempotencyKey },
    options,
  );
}

async function replay(ctx: UseCaseContext, brandId: string, known: SerialMoveRecord, requestHash: string, key: string): Promise<SerialMoveReport> {
  if (known.requestHash !== requestHash) throw new IdempotencyKeyReusedError(`idempotency_key ${JSON.stringify(key)} was used for another move`);
  return report(unitOfWork(ctx.db), brandId, known, true);
}

/**
 * Runs the next chunk of a running move in its own transaction (the executor's step; also the
 * sweeper's after a crash). Returns the move after the chunk, or null when it is not the brand's.
 * A move already done is returned as it is.
 */
export async function continueSerialMove(ctx: UseCaseContext, brandId: string, moveId: string): Promise<SerialMoveRecord | null> {
  return transaction(ctx.db, async (em) => {
    const m = await findSerialMove(em, brandId, moveId, true);
    if (m === null || m.status !== 'running') return m;
    return runChunk(ctx, em, brandId, moveId, null, { single: false });
  });
}

/**
 * The executor's step: claims the running move touched longest ago, past its retry backoff, that
 * no other worker holds and runs its next chunk, all in one transaction (a worker killed mid-chunk
 * leaves nothing of it, and the next claim runs it again). A chunk that throws is rolled back and
 * counted as a failed attempt of the move in a transaction of its own: the move waits out the
 * {@link serialMoveRetry} backoff (other moves are claimed meanwhile) and, when its attempts are
 * used up, fails with the error named and a serial_move_failed event. Returns the move after the
 * chunk (or the failed attempt), or null when no move waits.
 */
export async function runSerialMoveChunk(ctx: UseCaseContext): Promise<(SerialMoveRecord & { readonly brandId: string }) | null> {
  let claimed: { readonly brandId: string; readonly id: string; readonly attempts: number } | null = null;
  try {
    return await transaction(ctx.db, async (em) => {
      const claim = await claimRunningSerialMove(em, ctx.clock());
      if (claim === null) return null;
      claimed = claim;
      return { ...(await runChunk(ctx, em, claim.brandId, claim.id, null, { single: false })), brandId: claim.brandId };
    });
  } catch (err) {
    const claim = claimed as { readonly brandId: string; readonly id: string; readonly attempts: number } | null;
    if (claim === null) throw err;
    return failedAttempt(ctx, claim, err);
  }
}

/** Records a failed attempt at a move's chunk: a backoff, or when the attempts are used up the move's failure with its event. */
async function failedAttempt(
  ctx: UseCaseContext,
  claim: { readonly brandId: string; readonly id: string; readonly attempts: number },
  err: unknown,
): Promise<(SerialMoveRecord & { readonly brandId: string }) | null> {
  const { brandId, id } = claim;
  const attempts = claim.attempts + 1;
  const fail = attemptsExhausted(serialMoveRetry, attempts);
  const message = err instanceof Error ? err.message : String(err);
  const now = ctx.clock();
  const error = fail ? `gave up after ${attempts} failed attempts: ${message}` : message;
  return transaction(ctx.db, async (em) => {
    const counted = await recordSerialMoveFailure(em, brandId, id, {
      error,
      at: now,
      notBefore: fail ? null : new Date(now.getTime() + retryDelayMs(serialMoveRetry, attempts, Math.random())),
      fail,
    });
    if (counted === null) return null;
    const m = (await findSerialMove(em, brandId, id))!;
    if (fail) {
      await appendEvents(em, now, [
        {
          brandId,
          eventType: 'serial_move_failed',
          entityType: 'serial_move',
          entityId: id,
          actor: null,
          payload: { action: m.action, reason: m.reason, total: m.total, moved: m.moved, refused: m.refused, attempts: counted, error },
        },
      ]);
    }
    return { ...m, brandId };
  });
}

/**
 * The brand's move `moveId` as the caller sees it, with a page of its refusals; a partner sees
 * only its own moves. Missing or foreign: NotFoundError.
 */
export async function getSerialMove(
  ctx: UseCaseContext,
  brandId: string,
  moveId: string,
  partnerId: string | null = null,
  page: RefusalPage = {},
): Promise<SerialMoveReport> {
  const v = [...(isUuid(moveId) ? [] : [{ field: 'move_id', message: 'must be a uuid' }]), ...pageViolations(page)];
  if (v.length > 0) throw new InvalidInputError(v);
  const em = unitOfWork(ctx.db);
  const m = await findSerialMove(em, brandId, moveId);
  if (m === null || (partnerId !== null && m.target.partner_id !== partnerId)) throw new NotFoundError(`serial move ${moveId} not found`);
  return report(em, brandId, m, false, page);
}

/**
 * One chunk of a move, inside the caller's transaction, with the move row locked (or just
 * inserted). Set-based whatever the target: per batch, one statement moves the chunk's units that
 * are in a source state (and, for a partner's move, allocated to it), writing their lifecycle rows
 * and EPCIS events ({@link moveRange}); only the refused come back. A list's serials are found by
 * the units' repository first (unknown ones refused). A single listed serial keeps the per-unit
 * path, whose refusal is an error naming the state.
 */
async function runChunk(
  ctx: UseCaseContext,
  em: Em,
  brandId: string,
  moveId: string,
  actorId: string | null,
  opts: {
    readonly single: boolean;
    /** A container move's scope, read in this transaction. */
    readonly scope?: ContainerMoveScope;
  },
): Promise<SerialMoveRecord> {
  const m = (await findSerialMove(em, brandId, moveId, true))!;
  const move = serialMoveOf(m.action as SerialAction, m.reason as DecommissionReason | null);
  const now = ctx.clock();
  const partnerId = typeof m.target.partner_id === 'string' ? m.target.partner_id : null;
  const refusals: RefusedUnit[] = [];
  /** Moves the chunk's units of each batch, set-based, adding the refused to the report; returns the count moved. */
  const moveBatches = async (units: readonly { readonly mintBatchId: string; readonly seq: number }[]): Promise<number> => {
    let moved = 0;
    for (const [batchId, seqs] of seqsOf(units)) {
      const r = await moveRange(em, now, {
        brandId,
        moveId,
        actorId,
        partnerId,
        move,
        selector: { mintBatchId: batchId, fromSeq: seqs[0]!, toSeq: seqs.at(-1)!, seqs },
      });
      moved += r.moved;
      refusals.push(...r.refusals);
    }
    return moved;
  };
  if (typeof m.target.container === 'string') {
    // A move on a container: its containers move with the request (opts.scope, the tree locked);
    // its units a chunk at a time, container by container, as packed when the chunk runs.
    if (opts.scope !== undefined) await moveContainersOf(em, now, { brandId, moveId, move, tree: opts.scope.tree });
    const at = (m.cursor as ContainerCursor | null) ?? { pos: 0, after: null };
    const next = await containerMoveChunk(em, brandId, m.target.tree as string[], at, ctx.serialMoveChunk);
    const moved = await moveBatches(next.units);
    return finishChunk(em, now, brandId, m, { actorId, moved, refusals, nextSeq: null, cursor: next.next, done: next.next === null });
  }
  if (typeof m.target.allocation === 'string') {
    // A partner's return of its unused serials: the next chunk of its allocation still issued.
    const at = (m.cursor as AllocationCursor | null) ?? null;
    const next = await unusedAllocatedUnits(em, brandId, m.target.allocation, at, ctx.serialMoveChunk);
    const moved = await moveBatches(next.units);
    const cursor = next.next === null ? null : { ...next.next };
    return finishChunk(em, now, brandId, m, { actorId, moved, refusals, nextSeq: null, cursor, done: next.next === null });
  }
  if (Array.isArray(m.target.serials)) {
    const serials = m.target.serials as string[];
    if (opts.single) return moveSingle(em, now, brandId, m, { actorId, partnerId, move, serial: serials[0]! });
    // The brand's units of the listed serials, found by the units' repository (not locked: the move's statement locks them).
    const units = await lockUnitsForMove(em, brandId, { serials }, false, { states: false });
    const found = new Set(units.map((u) => u.serial));
    for (const serial of serials) {
      if (!found.has(serial)) refusals.push({ serial, mintBatchId: null, seq: null, refusal: 'unknown', state: null, reason: null });
    }
    const moved = await moveBatches(units);
    return finishChunk(em, now, brandId, m, { actorId, moved, refusals, nextSeq: null, done: true });
  }
  const to = m.target.to_seq as number;
  const from = m.nextSeq!;
  const last = Math.min(to, from + ctx.serialMoveChunk - 1);
  const done = last === to;
  // A batch or range: checked and moved in the database, nothing per unit comes back but the refused.
  const r = await moveRange(em, now, {
    brandId,
    moveId,
    actorId,
    partnerId,
    move,
    selector: { mintBatchId: m.target.mint_batch_id as string, fromSeq: from, toSeq: last },
  });
  refusals.push(...r.refusals);
  return finishChunk(em, now, brandId, m, { actorId, moved: r.moved, refusals, nextSeq: done ? null : last + 1, done });
}

/**
 * A move of one listed serial, unit by unit: a serial that cannot move is an error naming its
 * state (or that it is unknown, not allocated to the partner, or of a voided batch), and the move
 * is not kept.
 */
async function moveSingle(
  em: Em,
  now: Date,
  brandId: string,
  m: SerialMoveRecord,
  c: { readonly actorId: string | null; readonly partnerId: string | null; readonly move: SerialMove; readonly serial: string },
): Promise<SerialMoveRecord> {
  const { move, partnerId } = c;
  const [u] = await lockUnitsForMove(em, brandId, { serials: [c.serial] }, true);
  if (u === undefined) throw new NotFoundError(`serial ${c.serial} not found`);
  if (partnerId !== null && (await readUnitPartners(em, brandId, [u])).get(`${u.mintBatchId}/${u.seq}`) !== partnerId) {
    throw new NotFoundError(`serial ${u.serial} is not in this partner's allocation`);
  }
  moveOneSerial(move, u.state, u.reason);
  if (u.batchVoided) throw new IllegalStateError(`serial ${u.serial} belongs to a voided mint batch`);
  await applyMove(em, now, { brandId, moveId: m.id, actorId: c.actorId, partnerId, move, units: [u] });
  return finishChunk(em, now, brandId, m, { actorId: c.actorId, moved: 1, refusals: [], nextSeq: null, done: true });
}

/** Records a chunk's outcome on its move (a compare-and-set on its progress), with the completion event when it was the last. */
async function finishChunk(
  em: Em,
  now: Date,
  brandId: string,
  m: SerialMoveRecord,
  c: {
    readonly actorId: string | null;
    readonly moved: number;
    readonly refusals: readonly RefusedUnit[];
    readonly nextSeq: number | null;
    readonly done: boolean;
    readonly cursor?: ContainerCursor | AllocationCursor | null;
  },
): Promise<SerialMoveRecord> {
  const after = { ...m, moved: m.moved + c.moved, refused: m.refused + c.refusals.length };
  if (c.done) {
    await appendEvents(em, now, [
      {
        brandId,
        eventType: 'serial_move_completed',
        entityType: 'serial_move',
        entityId: m.id,
        actor: c.actorId,
        payload: { action: m.action, reason: m.reason, total: m.total, moved: after.moved, refused: after.refused },
      },
    ]);
  }
  const stored: StoredRefusal[] = c.refusals.map((r) => ({
    serial: r.serial,
    mintBatchId: r.mintBatchId,
    seq: r.seq,
    refusal: r.refusal,
    state: r.state,
    reason: r.reason,
  }));
  const cursor = c.cursor === undefined || c.cursor === null ? null : { ...c.cursor };
  if (
    !(await recordSerialMoveChunk(em, brandId, m.id, {
      expectedMoved: m.moved,
      expectedRefused: m.refused,
      moved: c.moved,
      refusals: stored,
      nextSeq: c.nextSeq,
      cursor,
      done: c.done,
      at: now,
    }))
  ) {
    throw new IllegalStateError(`serial move ${m.id} moved concurrently`);
  }
  return { ...after, status: c.done ? 'done' : 'running', nextSeq: c.nextSeq, cursor, attempts: 0, error: null, updatedAt: now };
}

/**
 * One chunk of a batch or range move, set-based ({@link moveUnitRange}): the units' states, their
 * statuses, their lifecycle rows and the EPCIS events in one statement, then the mint_units_moved
 * audit event and active_tokens from the count moved. Returns the count and the refused units.
 */
async function moveRange(
  em: Em,
  now: Date,
  c: {
    readonly brandId: string;
    readonly moveId: string;
    readonly actorId: string | null;
    /** A partner's move: only its allocated units move (see RangeMove.partnerId). */
    readonly partnerId: string | null;
    readonly move: SerialMove;
    readonly selector: { readonly mintBatchId: string; readonly fromSeq: number; readonly toSeq: number; readonly seqs?: readonly number[] };
  },
): Promise<{ moved: number; refusals: RefusedUnit[] }> {
  const { brandId, moveId, move, selector } = c;
  const delta = activeDelta(move);
  const r = await moveUnitRange(em, {
    brandId,
    moveId,
    mintBatchId: selector.mintBatchId,
    fromSeq: selector.fromSeq,
    toSeq: selector.toSeq,
    ...(selector.seqs === undefined ? {} : { seqs: selector.seqs }),
    at: now,
    from: move.from,
    fromReasons: move.fromReasons,
    to: move.to,
    reason: move.reason,
    unitStatus: delta > 0 ? 'active' : delta < 0 ? 'inactive' : null,
    events: rangeEventsOf(moveId, move, selector, now),
    serialsToName: eventSerials,
    partnerId: c.partnerId,
  });
  const refusals = r.refused.map(
    (u): RefusedUnit => ({
      serial: u.serial,
      mintBatchId: selector.mintBatchId,
      seq: u.seq,
      refusal:
        u.serial === null
          ? 'unknown'
          : u.batchVoided
            ? 'batch_voided'
            : u.notAllocated === true
              ? 'not_allocated'
              : (refusalOf(move, u.state!, u.reason) ?? 'wrong_state'),
      state: u.state,
      reason: u.reason,
    }),
  );
  if (r.moved > 0) {
    await appendEvents(em, now, [
      {
        brandId,
        eventType: 'mint_units_moved',
        entityType: 'mint_batch',
        entityId: selector.mintBatchId,
        actor: c.actorId,
        payload: {
          move_id: moveId,
          action: move.action,
          reason: move.reason,
          to: move.to,
          count: r.moved,
          serials: r.serials,
          first_seq: r.firstSeq,
          last_seq: r.lastSeq,
        },
      },
    ]);
    if (delta !== 0) await bumpKpis(em, brandId, { activeTokens: delta * r.moved });
  }
  return { moved: r.moved, refusals };
}

/** The seqs of units per batch, each batch's in ascending order (units come in batch and seq order). */
function seqsOf(units: readonly { readonly mintBatchId: string; readonly seq: number }[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const u of units) {
    const list = out.get(u.mintBatchId);
    if (list === undefined) out.set(u.mintBatchId, [u.seq]);
    else list.push(u.seq);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/**
 * The EPCIS 2.0 ObjectEvents of a range chunk, one per vocabulary of the move's source states (a
 * commissioning of encoded and of issued serials differ), without their EPCs (the database lists
 * the units moved). The id is derived from the move, the vocabulary and the chunk's first seq, so
 * a chunk written again names the same event.
 */
function rangeEventsOf(moveId: string, move: SerialMove, selector: { readonly mintBatchId: string; readonly fromSeq: number }, at: Date): RangeMoveEvent[] {
  const groups = new Map<string, { vocab: ReturnType<typeof epcisVocabularyOf>; states: SerialState[] }>();
  for (const state of move.from) {
    const vocab = epcisVocabularyOf(move, state);
    const key = `${vocab.action} ${vocab.bizStep} ${vocab.disposition}`;
    const g = groups.get(key) ?? { vocab, states: [] };
    g.states.push(state);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ vocab, states }) => {
    const id = derivedUuid(`${moveId}/${vocab.action}/${vocab.bizStep}/${selector.mintBatchId}/${selector.fromSeq}`);
    return {
      states,
      id,
      bizStep: vocab.bizStep,
      disposition: vocab.disposition,
      body: {
        type: 'ObjectEvent',
        eventID: `urn:uuid:${id}`,
        eventTime: at.toISOString(),
        eventTimeZoneOffset: '+00:00',
        recordTime: at.toISOString(),
        action: vocab.action,
        bizStep: vocab.bizStep,
        disposition: vocab.disposition,
      },
    };
  });
}

/** The writes of one chunk's eligible units: states, unit statuses, audit events and EPCIS events. */
export async function applyMove(
  em: Em,
  now: Date,
  c: {
    readonly brandId: string;
    readonly moveId: string;
    readonly actorId: string | null;
    readonly move: SerialMove;
    readonly units: readonly UnitForMove[];
    /** The partner whose key moved them: its EPCIS events are that partner's. Absent or null: the brand. */
    readonly partnerId?: string | null;
    /** The EPCIS events to store instead of the move's own (a captured document's event). */
    readonly epcis?: readonly NewEpcisEvent[];
    /** The units' states and statuses are written already (the decommissioning statement). */
    readonly written?: boolean;
  },
): Promise<void> {
  const { brandId, moveId, move, units } = c;
  if (units.length === 0) return;
  const delta = activeDelta(move);
  if (c.written !== true) {
    await writeSerialMove(em, {
      brandId,
      moveId,
      at: now,
      to: move.to,
      reason: move.reason,
      units,
      unitStatus: delta > 0 ? 'active' : delta < 0 ? 'inactive' : null,
    });
  }
  const byBatch = new Map<string, UnitForMove[]>();
  for (const u of units) {
    const list = byBatch.get(u.mintBatchId) ?? [];
    list.push(u);
    byBatch.set(u.mintBatchId, list);
  }
  const events: NewEvent[] = [...byBatch].map(([batchId, list]) => ({
    brandId,
    eventType: 'mint_units_moved',
    entityType: 'mint_batch',
    entityId: batchId,
    actor: c.actorId,
    payload: {
      move_id: moveId,
      action: move.action,
      reason: move.reason,
      to: move.to,
      count: list.length,
      serials: list.slice(0, eventSerials).map((u) => u.serial),
      first_seq: list[0]!.seq,
      last_seq: list[list.length - 1]!.seq,
    },
  }));
  await appendEvents(em, now, events);
  await insertEpcisEvents(em, c.epcis ?? epcisEventsOf(brandId, moveId, move, units, now).map((e) => ({ ...e, partnerId: c.partnerId ?? null })));
  if (delta !== 0) await bumpKpis(em, brandId, { activeTokens: delta * units.length });
}

/**
 * The EPCIS 2.0 ObjectEvents of a chunk's moved units: one per EPCIS action (a commissioning of
 * encoded and of issued serials differ), listing the units' EPCs. The event id is derived from the
 * move, the action and the chunk's first unit, so a chunk written twice would name the same event.
 */
export function epcisEventsOf(brandId: string, moveId: string, move: SerialMove, units: readonly UnitForMove[], at: Date): NewEpcisEvent[] {
  const groups = new Map<string, { vocab: ReturnType<typeof epcisVocabularyOf>; units: UnitForMove[] }>();
  for (const u of units) {
    const vocab = epcisVocabularyOf(move, u.state);
    const key = `${vocab.action} ${vocab.bizStep} ${vocab.disposition}`;
    const g = groups.get(key) ?? { vocab, units: [] };
    g.units.push(u);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ vocab, units: list }) => {
    const id = derivedUuid(`${moveId}/${vocab.action}/${vocab.bizStep}/${list[0]!.mintBatchId}/${list[0]!.seq}`);
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
    };
    return {
      brandId,
      id,
      moveId,
      eventType: 'ObjectEvent',
      eventTime: at,
      recordTime: at,
      bizStep: vocab.bizStep,
      disposition: vocab.disposition,
      epcs: epcList,
      body,
    };
  });
}

/** Wraps stored events into an EPCIS 2.0 document (JSON-LD). */
export function epcisDocument(events: readonly Record<string, unknown>[], createdAt: Date): Record<string, unknown> {
  return {
    '@context': [epcisContext],
    type: 'EPCISDocument',
    schemaVersion: '2.0',
    creationDate: createdAt.toISOString(),
    epcisBody: { eventList: events },
  };
}
