export { startProductImport, runProductImport, failProductImport, importMayStart, findImportsToSweep, purgeStaleImportKeys } from './product-imports.ts';
export { startLinkImport, getLinkImport } from './link-imports.ts';
export { getProductImport, type ImportView } from './import-runs.ts';
