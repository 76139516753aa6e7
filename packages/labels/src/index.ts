export { type Symbology, type LabelUnit, labelUnitViolations, elementString, hriLines } from './unit.ts';
export { type Paper, paperSizesMm, type SheetLayout, defaultSheetLayout, checkSheetLayout, minLabelSideMm, maxGridSide } from './layout.ts';
export { svgLabel, svgModuleMm } from './svg.ts';
export { zplLabel, type ZplDpi, zplLabelWidthMm } from './zpl.ts';
export { pdfSheets } from './pdf.ts';
export { reportPdf, type ReportDocument, type ReportTable } from './report-pdf.ts';
