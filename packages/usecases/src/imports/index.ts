export { startProductImport, runProductImport, failProductImport, importMayStart, findImportsToSweep } from './product-imports.ts';
export { startLinkImport, getLinkImport } from './link-imports.ts';
export { getProductImport, type ImportView } from './import-runs.ts';
