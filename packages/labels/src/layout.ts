/**
 * Label sheets: paper sizes, the grid of labels on a page and the check that every label of the
 * grid lies on the page.
 */

import type { FieldViolation } from '@mint/domain';

/** Paper sizes a sheet can be printed on. */
export type Paper = 'a4' | 'letter';

/** Width and height of each paper, in millimetres (ISO 216 A4; US Letter 8.5 x 11 in). */
export const paperSizesMm: Readonly<Record<Paper, { readonly width: number; readonly height: number }>> = {
  a4: { width: 210, height: 297 },
  letter: { width: 215.9, height: 279.4 },
};

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

/** A4 with 3 x 8 labels of 63.5 x 33.9 mm, the common 24-up sheet (pitch 66 x 33.9 mm, centred). */
export const defaultSheetLayout: SheetLayout = {
  paper: 'a4', columns: 3, rows: 8, labelWidthMm: 63.5, labelHeightMm: 33.9, marginTopMm: 12.9, marginLeftMm: 7.25, gapXMm: 2.5, gapYMm: 0,
};

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
export function checkSheetLayout(layout: SheetLayout): FieldViolation | null {
  if (!Object.hasOwn(paperSizesMm, layout.paper)) return { field: 'layout.paper', message: 'must be a4 or letter' };
  const paper = paperSizesMm[layout.paper];
  for (const [key, field] of [['columns', 'layout.columns'], ['rows', 'layout.rows']] as const) {
    const value = layout[key];
    if (!Number.isInteger(value) || value < 1 || value > maxGridSide) return { field, message: `must be a whole number from 1 to ${maxGridSide}` };
  }
  const lengths = [
    ['labelWidthMm', 'layout.label_width_mm'], ['labelHeightMm', 'layout.label_height_mm'], ['marginTopMm', 'layout.margin_top_mm'],
    ['marginLeftMm', 'layout.margin_left_mm'], ['gapXMm', 'layout.gap_x_mm'], ['gapYMm', 'layout.gap_y_mm'],
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
  if (across(layout.columns) > paper.width + epsilon) return { field: 'layout.columns', message: `${layout.columns} columns overrun the ${size} page (${across(layout.columns).toFixed(1)} mm)` };
  if (down(layout.rows) > paper.height + epsilon) return { field: 'layout.rows', message: `${layout.rows} rows overrun the ${size} page (${down(layout.rows).toFixed(1)} mm)` };
  return null;
}
