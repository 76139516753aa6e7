import {
  activateUnitsById,
  activateUnitsOfBatch,
  appendEvents,
  bumpKpis,
  insertEpcisEvents,
  lockBatchForShare,
  lockBatchesOfUnits,
  retryingDeadlocks,
  transaction,
  type CommissionedUnit,
  type Em,
} from '@mint/db';
import { IllegalStateError, InvalidInputError, NotFoundError, isUuid, type FieldViolation, type NewEvent } from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { commissioningEvents, derivedUuid } from '../lifecycle/index.ts';

/** Most unit ids one activation may name. */
export const maxActivationUnitIds = 1000;

/** What to activate: every inactive unit of a batch, or the named units. */
export type ActivationTarget = { readonly brandId: string; readonly mintBatchId: string } | { readonly brandId: string; readonly unitIds: readonly string[] };

/** Result of {@link activateMintUnits}. */
export interface ActivationResult {
  /** Units that moved from inactive to active in this call (0 on a repeat). */
  readonly activatedCount: number;
}

/**
 * Manual activation (activation mode first_scan): moves the target's inactive units to active with
 * activated_at, adds exactly the number changed to active_tokens and writes one
 * mint_units_activated event per batch that changed (entity mint_batch, so the batch's event
 * filter shows it) and the units' EPCIS 2.0 commissioning ObjectEvents (as a commissioning move
 * would: ADD for issued units, OBSERVE for encoded ones), all in one transaction. Idempotent: a
 * repeat changes and writes nothing (no key needed: only an inactive unit changes, and each event's
 * id is derived from its batch and first seq).
 * By batch: a missing or foreign batch is NotFoundError. By ids: ids that are not units of the
 * brand are ignored (counted 0, their existence never confirmed). Units of a voided batch:
 * IllegalStateError, nothing changes. Already-active units (active_at_mint) count 0. Two
 * activations meeting a batch's units in opposite orders may deadlock: the victim runs again.
 */
export async function activateMintUnits(ctx: UseCaseContext, actor: Actor, target: ActivationTarget): Promise<ActivationResult> {
  const { brandId } = target;
  if ('mintBatchId' in target) {
    if (!isUuid(target.mintBatchId)) throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
    const batchId = target.mintBatchId;
    return retryingDeadlocks(() =>
      transaction(ctx.db, async (em) => {
        const batch = await lockBatchForShare(em, brandId, batchId);
        if (batch === null) throw new NotFoundError(`mint batch ${batchId} not found`);
        if (batch.status === 'voided') throw new IllegalStateError(`mint batch ${batchId} is voided; its units cannot be activated`);
        const now = ctx.clock();
        const units = await activateUnitsOfBatch(em, brandId, batchId, now);
        const count = units.length;
        await writeCommissioning(em, brandId, batchId, units, now);
        if (count > 0) {
          await bumpKpis(em, brandId, { activeTokens: count });
          await appendEvents(em, now, [
            {
              brandId,
              eventType: 'mint_units_activated',
              entityType: 'mint_batch',
              entityId: batchId,
              actor: actor.id,
              payload: { activated_count: count, target: 'mint_batch' },
            },
          ]);
        }
        return { activatedCount: count };
      }),
    );
  }
  const unitIds = [...new Set(target.unitIds)];
  const v: FieldViolation[] = [];
  if (unitIds.length === 0 || target.unitIds.length > maxActivationUnitIds) {
    v.push({ field: 'unit_ids.ids', message: `must hold 1 to ${maxActivationUnitIds} unit ids` });
  }
  target.unitIds.forEach((id, i) => {
    if (!isUuid(id)) v.push({ field: `unit_ids.ids[${i}]`, message: 'must be a uuid' });
  });
  if (v.length > 0) throw new InvalidInputError(v);
  return retryingDeadlocks(() =>
    transaction(ctx.db, async (em) => {
      const batches = await lockBatchesOfUnits(em, brandId, unitIds);
      const voided = batches.find((b) => b.status === 'voided');
      if (voided) throw new IllegalStateError(`mint batch ${voided.id} is voided; its units cannot be activated`);
      const now = ctx.clock();
      const changed = await activateUnitsById(em, brandId, unitIds, now);
      const count = changed.reduce((sum, c) => sum + c.unitIds.length, 0);
      for (const c of changed) await writeCommissioning(em, brandId, c.mintBatchId, c.units, now);
      if (count > 0) {
        await bumpKpis(em, brandId, { activeTokens: count });
        await appendEvents(
          em,
          now,
          changed.map(
            (c): NewEvent => ({
              brandId,
              eventType: 'mint_units_activated',
              entityType: 'mint_batch',
              entityId: c.mintBatchId,
              actor: actor.id,
              payload: { activated_count: c.unitIds.length, target: 'unit_ids', unit_ids: c.unitIds },
            }),
          ),
        );
      }
      return { activatedCount: count };
    }),
  );
}

/** Most commissioning events inserted by one statement (each names up to 10,000 EPCs). */
const eventsPerInsert = 10;

/**
 * The EPCIS 2.0 commissioning ObjectEvents of units an activation commissioned, in its transaction:
 * issued and encoded units apart, each run split by the event size, each event's id derived from its
 * batch and first unit (a unit is activated at most once), so they are written exactly once.
 */
async function writeCommissioning(em: Em, brandId: string, batchId: string, units: readonly CommissionedUnit[], at: Date): Promise<void> {
  for (const encoded of [false, true]) {
    const group = units.filter((u) => u.encoded === encoded);
    const events = commissioningEvents({
      brandId,
      epcs: group.map((u) => u.epc),
      action: encoded ? 'OBSERVE' : 'ADD',
      at,
      idOf: (offset) => derivedUuid(`activation/${batchId}/${group[offset]!.seq}`),
    });
    for (let i = 0; i < events.length; i += eventsPerInsert) await insertEpcisEvents(em, events.slice(i, i + eventsPerInsert));
  }
}
