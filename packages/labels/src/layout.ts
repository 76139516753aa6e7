/**
 * Label sheets: paper sizes, the grid of labels on a page and the check that every label of the
 * grid lies on the page.
 */

import { defaultLabelLayout, maxGridSide, minLabelSideMm, paperSizesMm, sheetLayoutViolation, type Paper, type SheetLayout } from '@mint/domain';

export type { Paper, SheetLayout };
export { maxGridSide, minLabelSideMm, paperSizesMm };
/** The first problem of a layout, or null when every label of the grid lies on the page (the domain's rule). */
export const checkSheetLayout = sheetLayoutViolation;

/** The sheet of the domain's default label layout (A4, 3 x 8). */
export const defaultSheetLayout: SheetLayout = (({ dpi: _dpi, ...sheet }) => sheet)(defaultLabelLayout);
