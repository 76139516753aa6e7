import { IllegalStateError, InvalidInputError, type FieldViolation } from './errors.ts';
import type { BatchStatus } from './batch-status.ts';

/**
 * What a payload pack holds: its formats, an optional unit range, the barcode symbology and the
 * label layout. Pure rules; the files themselves are written by the use cases' format registry.
 */

/** A file format of a pack. */
export type PackFormat =
  /** units.csv: one row per unit (serial) or lot. */
  | 'csv'
  /** units.jsonl: the same rows as JSON Lines. */
  | 'jsonl'
  /** One SVG label per unit (barcode and human-readable text). */
  | 'svg'
  /** Label sheets (A4 or US Letter) in one PDF. */
  | 'pdf'
  /** One ZPL label per unit for Zebra printers. */
  | 'zpl'
  /** An EPCIS 2.0 JSON-LD document of commissioning (or, for a voided batch, decommissioning) events. */
  | 'epcis';
/** All pack formats, in the order files are written and listed. */
export const packFormats: readonly PackFormat[] = ['csv', 'jsonl', 'svg', 'pdf', 'zpl', 'epcis'];
/** Formats that render barcodes (need the product's GTIN). */
export const labelFormats: readonly PackFormat[] = ['svg', 'pdf', 'zpl'];
/** Formats holding at most {@link maxLabelPackUnits} units (use ranges beyond that). */
export const limitedFormats: readonly PackFormat[] = ['svg', 'pdf'];
/** Most units an SVG or PDF pack may hold. */
export const maxLabelPackUnits = 100_000;

/** Barcode symbology of label formats. */
export type Symbology =
  /** A QR code carrying the GS1 Digital Link URI (the default). */
  | 'qr'
  /** A GS1 DataMatrix carrying the element string (01)(21) or (01)(10). */
  | 'datamatrix';
/** All symbologies. */
export const symbologies: readonly Symbology[] = ['qr', 'datamatrix'];

/** Paper of PDF label sheets. */
export type Paper = 'a4' | 'letter';
/** All papers. */
export const papers: readonly Paper[] = ['a4', 'letter'];
/** Printer resolutions ZPL labels are laid out for. */
export const zplDpis: readonly (203 | 300)[] = [203, 300];

/** A grid of equal labels on a page; every length in millimetres, margins from the page's top-left corner. */
export interface SheetLayout {
  readonly paper: Paper;
  /** Labels across. */
  readonly columns: number;
  /** Labels down. */
  readonly rows: number;
  readonly labelWidthMm: number;
  readonly labelHeightMm: number;
  /** Distance from the page's top edge to the first row. */
  readonly marginTopMm: number;
  /** Distance from the page's left edge to the first column. */
  readonly marginLeftMm: number;
  /** Horizontal space between two labels. */
  readonly gapXMm: number;
  /** Vertical space between two labels. */
  readonly gapYMm: number;
}

/** The label layout of a pack: the PDF sheet grid (mm) and the ZPL printer's resolution. */
export interface LabelLayout extends SheetLayout {
  readonly dpi: 203 | 300;
}

/** The layout used when a request gives none: A4, 3 x 8 labels of 70 x 37 mm, no margins or gaps, 203 dpi. */
export const defaultLabelLayout: LabelLayout = {
  paper: 'a4',
  columns: 3,
  rows: 8,
  labelWidthMm: 70,
  labelHeightMm: 37,
  marginTopMm: 0,
  marginLeftMm: 0,
  gapXMm: 0,
  gapYMm: 0,
  dpi: 203,
};

/** Page sizes in mm (portrait). */
export const paperSizesMm: Readonly<Record<Paper, { readonly width: number; readonly height: number }>> = {
  a4: { width: 210, height: 297 },
  letter: { width: 215.9, height: 279.4 },
};

/** Why a pack exists. */
export type PackPurpose =
  /** Created with the job's completion (csv, jsonl, epcis). */
  | 'completion'
  /** Asked for with CreatePayloadPack. */
  | 'request'
  /** Created when the batch was voided: one EPCIS file with the decommissioning event. */
  | 'void';
/** All pack purposes. */
export const packPurposes: readonly PackPurpose[] = ['completion', 'request', 'void'];

/** A pack's profile, stored with it. A null range means every unit of the batch. */
export interface PackProfile {
  readonly formats: readonly PackFormat[];
  /** First unit (seq, 1-based), inclusive; null for the whole batch. */
  readonly seqFrom: number | null;
  /** Last unit (seq), inclusive; null for the whole batch. */
  readonly seqTo: number | null;
  readonly symbology: Symbology;
  readonly layout: LabelLayout;
}

/** The profile of the automatic pack at a job's completion. */
export const completionPackProfile: PackProfile = {
  formats: ['csv', 'jsonl', 'epcis'],
  seqFrom: null,
  seqTo: null,
  symbology: 'qr',
  layout: defaultLabelLayout,
};
/** The profile of the pack created when a batch is voided. */
export const voidPackProfile: PackProfile = { formats: ['epcis'], seqFrom: null, seqTo: null, symbology: 'qr', layout: defaultLabelLayout };

/** A requested profile before checks (the transports fill what they got). */
export interface PackProfileInput {
  readonly formats: readonly string[];
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
  readonly symbology: string | null;
  /** Null for {@link defaultLabelLayout}; missing fields take its values. */
  readonly layout: Partial<Record<keyof LabelLayout, unknown>> | null;
}

/** What the profile checks need to know about the batch. */
export interface PackBatchFacts {
  readonly status: BatchStatus;
  readonly identityMode: string;
  readonly mintedQuantity: number;
  readonly gtin: string | null;
}

/** Statuses a batch may have for a pack to be asked for: minted and every later one but voided. */
export const packableBatchStatuses: readonly BatchStatus[] = ['minted', 'exported', 'printed', 'applied'];

/**
 * Checks the batch can be packed: an IllegalStateError (FailedPrecondition) for a voided batch or
 * one not yet minted (draft).
 */
export function assertPackableBatch(status: BatchStatus): void {
  if (status === 'voided') throw new IllegalStateError('mint batch is voided: its identities are withdrawn and cannot be packed');
  if (!packableBatchStatuses.includes(status)) throw new IllegalStateError(`mint batch is ${status}: a pack needs a minted batch`);
}

const layoutRanges: Readonly<
  Record<Exclude<keyof LabelLayout, 'paper' | 'dpi'>, { readonly min: number; readonly max: number; readonly integer: boolean; readonly field: string }>
> = {
  columns: { min: 1, max: 20, integer: true, field: 'layout.columns' },
  rows: { min: 1, max: 40, integer: true, field: 'layout.rows' },
  labelWidthMm: { min: 15, max: 216, integer: false, field: 'layout.label_width_mm' },
  labelHeightMm: { min: 15, max: 280, integer: false, field: 'layout.label_height_mm' },
  marginTopMm: { min: 0, max: 100, integer: false, field: 'layout.margin_top_mm' },
  marginLeftMm: { min: 0, max: 100, integer: false, field: 'layout.margin_left_mm' },
  gapXMm: { min: 0, max: 50, integer: false, field: 'layout.gap_x_mm' },
  gapYMm: { min: 0, max: 50, integer: false, field: 'layout.gap_y_mm' },
};

/**
 * The layout field violations: each number in its range, a known paper and dpi, and the whole grid
 * (margins, labels and gaps) inside the page, so every label fits ({@link sheetLayoutViolation}).
 * A label side under 15 mm would hold no readable symbol and its text.
 */
export function layoutViolations(layout: LabelLayout): FieldViolation[] {
  const v: FieldViolation[] = [];
  if (!papers.includes(layout.paper)) v.push({ field: 'layout.paper', message: `must be one of ${papers.join(', ')}` });
  if (!zplDpis.includes(layout.dpi)) v.push({ field: 'layout.dpi', message: `must be one of ${zplDpis.join(', ')}` });
  for (const [key, range] of Object.entries(layoutRanges) as [keyof typeof layoutRanges, (typeof layoutRanges)[keyof typeof layoutRanges]][]) {
    const value = layout[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < range.min || value > range.max || (range.integer && !Number.isInteger(value))) {
      v.push({ field: range.field, message: `must be ${range.integer ? 'an integer' : 'a number'} from ${range.min} to ${range.max}` });
    }
  }
  if (v.length > 0) return v;
  const fit = sheetLayoutViolation(layout);
  if (fit !== null) v.push(fit);
  return v;
}

/** Smallest label side that still holds a symbol and its text, in millimetres. */
export const minLabelSideMm = 15;
/** Most labels across or down a page. */
export const maxGridSide = 50;
/** Tolerance for rounding in millimetre sums (a micrometre). */
const epsilon = 0.001;

/**
 * The first problem of `layout`, or null when every label of the grid lies on the page. Fields are
 * named as on the wire (`layout.columns`, `layout.label_width_mm`, …): an unknown paper, a grid
 * side that is not a whole number from 1 to 50, a length that is negative or not finite, a label
 * side under 15 mm, a single label that overruns the page (its size or the margin is named), or a
 * grid whose last column or row overruns it (`layout.columns` / `layout.rows`).
 */
export function sheetLayoutViolation(layout: SheetLayout): FieldViolation | null {
  if (!Object.hasOwn(paperSizesMm, layout.paper)) return { field: 'layout.paper', message: 'must be a4 or letter' };
  const paper = paperSizesMm[layout.paper];
  for (const [key, field] of [
    ['columns', 'layout.columns'],
    ['rows', 'layout.rows'],
  ] as const) {
    const value = layout[key];
    if (!Number.isInteger(value) || value < 1 || value > maxGridSide) return { field, message: `must be a whole number from 1 to ${maxGridSide}` };
  }
  const lengths = [
    ['labelWidthMm', 'layout.label_width_mm'],
    ['labelHeightMm', 'layout.label_height_mm'],
    ['marginTopMm', 'layout.margin_top_mm'],
    ['marginLeftMm', 'layout.margin_left_mm'],
    ['gapXMm', 'layout.gap_x_mm'],
    ['gapYMm', 'layout.gap_y_mm'],
  ] as const;
  for (const [key, field] of lengths) {
    const value = layout[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return { field, message: 'must be a finite number of millimetres, 0 or more' };
  }
  for (const [key, field] of lengths.slice(0, 2)) {
    if (layout[key] < minLabelSideMm) return { field, message: `must be at least ${minLabelSideMm} mm so a symbol and its text fit` };
  }
  const across = (n: number) => layout.marginLeftMm + n * layout.labelWidthMm + (n - 1) * layout.gapXMm;
  const down = (n: number) => layout.marginTopMm + n * layout.labelHeightMm + (n - 1) * layout.gapYMm;
  const size = `${paper.width} x ${paper.height} mm`;
  if (layout.marginLeftMm >= paper.width) return { field: 'layout.margin_left_mm', message: `must leave room on the ${size} page` };
  if (layout.marginTopMm >= paper.height) return { field: 'layout.margin_top_mm', message: `must leave room on the ${size} page` };
  if (across(1) > paper.width + epsilon) return { field: 'layout.label_width_mm', message: `a label this wide overruns the ${size} page` };
  if (down(1) > paper.height + epsilon) return { field: 'layout.label_height_mm', message: `a label this high overruns the ${size} page` };
  if (across(layout.columns) > paper.width + epsilon)
    return { field: 'layout.columns', message: `${layout.columns} columns overrun the ${size} page (${across(layout.columns).toFixed(1)} mm)` };
  if (down(layout.rows) > paper.height + epsilon)
    return { field: 'layout.rows', message: `${layout.rows} rows overrun the ${size} page (${down(layout.rows).toFixed(1)} mm)` };
  return null;
}

/** The units of a range: seqTo - seqFrom + 1, or the whole batch. */
export function rangeUnitCount(profile: Pick<PackProfile, 'seqFrom' | 'seqTo'>, mintedQuantity: number): number {
  return (profile.seqTo ?? mintedQuantity) - (profile.seqFrom ?? 1) + 1;
}

/**
 * Checks a requested profile against the batch and returns it resolved (defaults filled, formats
 * de-duplicated in {@link packFormats} order). InvalidInputError naming each bad field: no or an
 * unknown format, an unknown symbology, a layout out of range or not fitting its page, a range on
 * a lot or product-only batch, outside 1..minted quantity or reversed, label formats for a product
 * without a GTIN, SVG or PDF above {@link maxLabelPackUnits} units. A voided or unminted batch is an
 * IllegalStateError (checked first).
 */
export function resolvePackProfile(input: PackProfileInput, batch: PackBatchFacts): PackProfile {
  assertPackableBatch(batch.status);
  const v: FieldViolation[] = [];
  const unknown = input.formats.filter((f) => !packFormats.includes(f as PackFormat));
  if (input.formats.length === 0) v.push({ field: 'formats', message: `at least one format is required: ${packFormats.join(', ')}` });
  if (unknown.length > 0)
    v.push({ field: 'formats', message: `unknown format ${unknown.map((f) => JSON.stringify(f)).join(', ')}; must be among ${packFormats.join(', ')}` });
  const formats = packFormats.filter((f) => input.formats.includes(f));
  const symbology = (input.symbology ?? 'qr') as Symbology;
  if (!symbologies.includes(symbology)) v.push({ field: 'symbology', message: `must be one of ${symbologies.join(', ')}` });
  const layout = {
    ...defaultLabelLayout,
    ...Object.fromEntries(Object.entries(input.layout ?? {}).filter(([, value]) => value !== undefined && value !== null)),
  } as LabelLayout;
  v.push(...layoutViolations(layout));
  const { seqFrom, seqTo } = input;
  const ranged = seqFrom !== null || seqTo !== null;
  if (ranged && batch.identityMode !== 'serial') {
    v.push({ field: seqFrom !== null ? 'seq_from' : 'seq_to', message: 'a unit range applies to serial batches only' });
  } else if (ranged) {
    for (const [field, value] of [
      ['seq_from', seqFrom],
      ['seq_to', seqTo],
    ] as const) {
      if (value !== null && (!Number.isInteger(value) || value < 1 || value > batch.mintedQuantity)) {
        v.push({ field, message: `must be a unit of the batch: 1 to ${batch.mintedQuantity}` });
      }
    }
    if (seqFrom !== null && seqTo !== null && seqFrom > seqTo) v.push({ field: 'seq_to', message: `must not be below seq_from (${seqFrom})` });
  }
  if (batch.gtin === null) {
    const label = formats.filter((f) => labelFormats.includes(f));
    if (label.length > 0) v.push({ field: 'formats', message: `${label.join(', ')} need a product with a GTIN (GS1 barcodes carry it)` });
  }
  if (v.length === 0) {
    const units = batch.identityMode === 'serial' ? rangeUnitCount({ seqFrom, seqTo }, batch.mintedQuantity) : 0;
    const over = formats.filter((f) => limitedFormats.includes(f));
    if (units > maxLabelPackUnits && over.length > 0) {
      v.push({
        field: 'formats',
        message: `${over.join(', ')} packs hold at most ${maxLabelPackUnits} units; this range has ${units} (use seq_from and seq_to)`,
      });
    }
  }
  if (v.length > 0) throw new InvalidInputError(v);
  return { formats, seqFrom, seqTo, symbology, layout };
}
