export { upsertProduct, getProduct, listProducts, upsertProductionBatch, type ProductView } from './catalog.ts';
// For the other use-case folders, not exported by the package.
export { productViolations, storedPassportUrl } from './catalog.ts';
