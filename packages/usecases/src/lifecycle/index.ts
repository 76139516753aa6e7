export { setMintBatchStatus } from './lifecycle.ts';
export { moveSerials, continueSerialMove, runSerialMoveChunk, getSerialMove, epcisDocument, type SerialMoveTarget, type MoveSerialsInput, type SerialMoveReport } from './serials.ts';
export { queryEpcis, captureEpcisDocument } from './epcis.ts';
export { reconcileMintBatch, reconciliationCsv } from './reconciliation.ts';
// For the other use-case folders, not exported by the package.
export { applyBatchMove } from './lifecycle.ts';
