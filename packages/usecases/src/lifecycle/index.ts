export { setMintBatchStatus } from './lifecycle.ts';
export {
  moveSerials,
  continueSerialMove,
  runSerialMoveChunk,
  getSerialMove,
  returnUnusedSerials,
  type ReturnUnusedSerialsInput,
  epcisDocument,
  type SerialMoveTarget,
  type MoveSerialsInput,
  type SerialMoveReport,
  type RefusalPage,
  maxRefusalPage,
} from './serials.ts';
export { queryEpcis, captureEpcisDocument } from './epcis.ts';
export {
  reconcileMintBatch,
  reconciliationCsv,
  reconciliationPdf,
  reconciliationDocument,
  documentFormats,
  type DocumentFormat,
  type PartnerReconciliation,
  type ReconciliationDocument,
} from './reconciliation.ts';
export {
  createPartner,
  grantPartnerKey,
  listPartners,
  revokePartnerKey,
  allocateSerials,
  allocationEpcisEvents,
  getPartnerAllocation,
  type GrantPartnerKeyInput,
  type GrantedPartnerKey,
  type PartnerCaller,
  type AllocateSerialsInput,
  type SerialAllocation,
  type PartnerAllocationView,
} from './partners.ts';
export {
  setContainerSettings,
  getContainerSettings,
  mintContainers,
  packContainer,
  unpackContainer,
  getContainer,
  resolveContainer,
  mayReadContainerContents,
  maxMintContainers,
  maxPackItems,
  maxContentsPage,
  type ContainerOpResult,
  type PublicContainer,
} from './containers.ts';
// For the other use-case folders, not exported by the package.
export { applyBatchMove } from './lifecycle.ts';
export { mintCommissioningEvents, commissioningEvents } from './epcis.ts';
export { derivedUuid } from './derived-uuid.ts';
