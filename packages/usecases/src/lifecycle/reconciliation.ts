import { countAllocatedStates, countUnitStates, countUnlistedSerials, findBatch, unitOfWork } from '@mint/db';
import { InvalidInputError, isUuid, NotFoundError, serialStates } from '@mint/domain';
import { reportPdf } from '@mint/labels';
import type { UseCaseContext } from '../context.ts';

/** The serials of a batch allocated to one partner, per state and reason. */
export interface PartnerReconciliation {
  readonly partnerId: string;
  readonly partnerName: string;
  /** Serials allocated to it (in any state now). */
  readonly allocated: number;
  /** Its serials per lifecycle state (every state listed, 0 included). */
  readonly byState: Readonly<Record<string, number>>;
  /** Its decommissioned serials per reason. */
  readonly byReason: Readonly<Record<string, number>>;
}

/** A batch's accounting of its serials. */
export interface BatchReconciliation {
  readonly mintBatchId: string;
  readonly requested: number;
  readonly minted: number;
  /** Units per lifecycle state (every state listed, 0 included). */
  readonly byState: Readonly<Record<string, number>>;
  /** Decommissioned units per reason. */
  readonly byReason: Readonly<Record<string, number>>;
  /** Requested serials not minted (yet). */
  readonly notMinted: number;
  /** Serials allocated to each partner, by partner name. */
  readonly byPartner: readonly PartnerReconciliation[];
  /** Minted serials never allocated to a partner, per state (the brand's own). */
  readonly unallocatedByState: Readonly<Record<string, number>>;
  /** Why the counts do not add up: each names the figures that differ (empty when balanced). */
  readonly problems: readonly string[];
  /** True when every count adds up: states to minted, partners plus unallocated to minted, minted plus not minted to requested, and no serial listed nowhere. */
  readonly balanced: boolean;
}

const sum = (o: Readonly<Record<string, number>>) => Object.values(o).reduce((a, b) => a + b, 0);
const zeroStates = (): Record<string, number> => Object.fromEntries(serialStates.map((s) => [s, 0]));

/**
 * Accounts for every serial of a batch: requested, minted, per state, per decommissioning reason
 * and per partner (its allocated serials per state and reason), and the serials never allocated.
 * Every figure is checked against the others; a serial listed nowhere (a lifecycle row or an
 * allocation without its unit, units not matching the minted quantity, states or partners not
 * adding up) is named in `problems` and makes `balanced` false. Missing or foreign batch:
 * NotFoundError.
 */
export async function reconcileMintBatch(ctx: UseCaseContext, brandId: string, mintBatchId: string): Promise<BatchReconciliation> {
  if (!isUuid(mintBatchId)) throw new InvalidInputError([{ field: 'mint_batch_id', message: 'must be a uuid' }]);
  const em = unitOfWork(ctx.db);
  const batch = await findBatch(em, brandId, mintBatchId);
  if (batch === null) throw new NotFoundError(`mint batch ${mintBatchId} not found`);
  const counts = await countUnitStates(em, brandId, mintBatchId);
  const byState = zeroStates();
  const byReason: Record<string, number> = {};
  for (const c of counts) {
    byState[c.state] = (byState[c.state] ?? 0) + c.count;
    if (c.reason !== null) byReason[c.reason] = (byReason[c.reason] ?? 0) + c.count;
  }
  const partners = new Map<
    string,
    { partnerId: string; partnerName: string; allocated: number; byState: Record<string, number>; byReason: Record<string, number> }
  >();
  for (const c of await countAllocatedStates(em, brandId, mintBatchId)) {
    const p = partners.get(c.partnerId) ?? { partnerId: c.partnerId, partnerName: c.partnerName, allocated: 0, byState: zeroStates(), byReason: {} };
    p.allocated += c.count;
    p.byState[c.state] = (p.byState[c.state] ?? 0) + c.count;
    if (c.reason !== null) p.byReason[c.reason] = (p.byReason[c.reason] ?? 0) + c.count;
    partners.set(c.partnerId, p);
  }
  const byPartner = [...partners.values()];
  const unallocatedByState = zeroStates();
  for (const s of Object.keys(byState)) unallocatedByState[s] = byState[s]! - byPartner.reduce((a, p) => a + (p.byState[s] ?? 0), 0);
  const unlisted = await countUnlistedSerials(em, brandId, mintBatchId);
  const requested = batch.requestedQuantity;
  const minted = batch.mintedQuantity;
  const notMinted = Math.max(0, requested - minted);
  const problems: string[] = [];
  const listed = sum(byState);
  if (unlisted.units !== minted) problems.push(`the batch holds ${unlisted.units} units but ${minted} are minted`);
  if (listed !== minted) problems.push(`the states account for ${listed} serials but ${minted} are minted`);
  if (minted + notMinted !== requested)
    problems.push(`${minted} minted and ${notMinted} not minted make ${minted + notMinted}, not the ${requested} requested`);
  if (unlisted.orphanStates > 0) problems.push(`${unlisted.orphanStates} lifecycle states name a serial the batch does not hold`);
  if (unlisted.orphanAllocations > 0) problems.push(`${unlisted.orphanAllocations} allocations name a serial the batch does not hold`);
  for (const [s, n] of Object.entries(unallocatedByState)) if (n < 0) problems.push(`partners hold ${-n} more ${s} serials than the batch`);
  return { mintBatchId, requested, minted, byState, byReason, notMinted, byPartner, unallocatedByState, problems, balanced: problems.length === 0 };
}

/** A CSV cell: quoted when it holds a comma, a quote or a line break. */
const cell = (v: string | number) => {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * The reconciliation as CSV (the batch's document of serialisation): one `category,name,count`
 * row per figure of the batch, then `partner:<id>` rows per partner (its name, allocated, states
 * and reasons), the unallocated serials per state, and the check with its problems.
 */
export function reconciliationCsv(r: BatchReconciliation): string {
  const rows: (string | number)[][] = [
    ['category', 'name', 'count'],
    ['batch', 'requested', r.requested],
    ['batch', 'minted', r.minted],
    ['batch', 'not_minted', r.notMinted],
    ...Object.entries(r.byState).map(([s, n]) => ['state', s, n]),
    ...Object.entries(r.byReason)
      .sort()
      .map(([s, n]) => ['reason', s, n]),
  ];
  for (const p of r.byPartner) {
    const category = `partner:${p.partnerId}`;
    rows.push([category, 'name', p.partnerName], [category, 'allocated', p.allocated]);
    rows.push(...Object.entries(p.byState).map(([s, n]) => [category, `state:${s}`, n]));
    rows.push(
      ...Object.entries(p.byReason)
        .sort()
        .map(([s, n]) => [category, `reason:${s}`, n]),
    );
  }
  rows.push(...Object.entries(r.unallocatedByState).map(([s, n]) => ['unallocated', `state:${s}`, n]));
  rows.push(['check', 'balanced', r.balanced ? 'yes' : 'no'], ...r.problems.map((p) => ['problem', p, '']));
  return `${rows.map((row) => row.map(cell).join(',')).join('\n')}\n`;
}

/** The reconciliation as a PDF report (the batch's document of serialisation, for the brand's files and auditors). */
export function reconciliationPdf(r: BatchReconciliation, createdAt: Date): Promise<Uint8Array> {
  const states = Object.keys(r.byState);
  return reportPdf({
    title: 'Document of serialisation',
    facts: [`Mint batch ${r.mintBatchId}`, `Requested ${r.requested}, minted ${r.minted}, not minted ${r.notMinted}`, `Made ${createdAt.toISOString()}`],
    tables: [
      { heading: 'Serials per state', columns: ['state', 'serials'], rows: states.map((s) => [s, r.byState[s]!]) },
      { heading: 'Decommissioned serials per reason', columns: ['reason', 'serials'], rows: Object.entries(r.byReason).sort() },
      {
        heading: 'Serials per partner',
        columns: ['partner', 'allocated'],
        rows: [...r.byPartner.map((p) => [p.partnerName, p.allocated]), ['not allocated', sum(r.unallocatedByState)]],
      },
      ...r.byPartner.map((p) => ({
        heading: `${p.partnerName}: serials per state and reason`,
        columns: ['state or reason', 'serials'],
        rows: [
          ...states.map((s) => [s, p.byState[s] ?? 0]),
          ...Object.entries(p.byReason)
            .sort()
            .map(([reason, count]) => [`decommissioned as ${reason}`, count]),
        ],
      })),
      { heading: 'Not allocated: serials per state', columns: ['state', 'serials'], rows: states.map((s) => [s, r.unallocatedByState[s] ?? 0]) },
      ...(r.problems.length > 0 ? [{ heading: 'Problems', columns: ['problem'], rows: r.problems.map((p) => [p]) }] : []),
    ],
    conclusion: r.balanced
      ? `Balanced: every one of the ${r.requested} requested serials is accounted for.`
      : `NOT balanced: ${r.problems.length} problem(s) listed above.`,
    createdAt,
  });
}

/** A format of the document of serialisation. */
export type DocumentFormat = 'csv' | 'pdf';
/** Every document format. */
export const documentFormats: readonly DocumentFormat[] = ['csv', 'pdf'];

/** A reconciliation document ready to hand out. */
export interface ReconciliationDocument {
  readonly fileName: string;
  readonly contentType: string;
  readonly content: Uint8Array;
}

/** The batch's document of serialisation as CSV or PDF, with its file name and media type. Missing or foreign batch: NotFoundError. */
export async function reconciliationDocument(
  ctx: UseCaseContext,
  brandId: string,
  mintBatchId: string,
  format: DocumentFormat,
): Promise<ReconciliationDocument> {
  const r = await reconcileMintBatch(ctx, brandId, mintBatchId);
  const base = `serialisation-${mintBatchId}`;
  if (format === 'csv') return { fileName: `${base}.csv`, contentType: 'text/csv; charset=utf-8', content: new TextEncoder().encode(reconciliationCsv(r)) };
  return { fileName: `${base}.pdf`, contentType: 'application/pdf', content: await reconciliationPdf(r, ctx.clock()) };
}
