// The use cases by feature: each folder's index is its public face; what it does not export stays inside it.
export { createUseCaseContext, type UseCaseContext } from './context.ts';
export { requestFingerprint, purgeExpiredIdempotencyRecords, idempotencyKeysOf } from './idempotency.ts';
export {
  verifyApiKey, recordApiKeyUse, issueAccessToken, apiKeyUseIntervalMs, authenticate, authorizeAuthenticated, authorize, listMyMemberships, type
  Credentials, type Caller, type Authenticated, type OperationAccess, partnerKeyRefusal, createWorkspace, createUser, grantRole, createApiKey,
  seedDemo, listApiKeys, revokeApiKey, setApiAccess, type DemoSeed, createApiKeyOf, listApiKeysOf, revokeApiKeyOf, listBrandMembersOf, addBrandMember,
  setBrandMemberRole, removeBrandMember, type ApiKeyView, type BrandMemberView,
} from './access/index.ts';
export {
  upsertProduct, getProduct, listProducts, upsertProductionBatch, type ProductView,
} from './catalog/index.ts';
export {
  startProductImport, runProductImport, failProductImport, importMayStart, findImportsToSweep, purgeStaleImportKeys, startLinkImport, getLinkImport, getProductImport, type
  ImportView,
} from './imports/index.ts';
export {
  setMintBatchStatus, moveSerials, continueSerialMove, runSerialMoveChunk, getSerialMove, epcisDocument, type SerialMoveTarget, type MoveSerialsInput,
  type SerialMoveReport, queryEpcis, captureEpcisDocument, reconcileMintBatch, reconciliationCsv, reconciliationPdf, reconciliationDocument,
  documentFormats, type DocumentFormat, type PartnerReconciliation, type ReconciliationDocument, createPartner, grantPartnerKey, listPartners,
  revokePartnerKey, allocateSerials, allocationEpcisEvents, getPartnerAllocation, type GrantPartnerKeyInput, type GrantedPartnerKey, type
  PartnerCaller, type AllocateSerialsInput, type SerialAllocation, type PartnerAllocationView, setContainerSettings, getContainerSettings,
  mintContainers, packContainer, unpackContainer, getContainer, resolveContainer, mayReadContainerContents, maxMintContainers, maxPackItems,
  maxContentsPage, type ContainerOpResult, type PublicContainer,
} from './lifecycle/index.ts';
export {
  upsertLink, listLinks, deleteLink, replaceLinks, type LinkView, setBrandResolverDomain,
} from './links/index.ts';
export {
  submitMintRequest, preflightMintBatch, claimMintJob, releaseMintJob, runMint, processMintJobBatch, sqlState, failMintJob, recordFailedAttempt, type
  CycleResult, type LoadedJob, type ClaimResult, getMintBatch, listMintBatches, getJobProgress, getMintJob, watchMintJob, findJobsToSweep,
  createProgressHub, publishJobProgress, type ProgressHub, relayOutbox, outboxLag, type OutboxJob, listMintUnits, listMintEvents, getMintKpis,
  activateMintUnits, createMintBatchFromJob, createMintBatchFromJobDeprecation, submitAndKick, keyedSubmit,
} from './mint/index.ts';
export {
  listPayloadPacks, createPayloadPack, sweepPackStore, type CreatePayloadPackInput, packFormatRegistry, packProfileOf, claimPayloadPack,
  generatePayloadPack, defaultPackLeaseMs, type PackManifest, type PackGenerationResult, type PackClaim, packColumns, createPayloadPackDownloadUrl,
  openPayloadPackDownload, type DownloadSettings, downloadPrefix,
} from './packs/index.ts';
export {
  type PassportKeyInput, type PassportVersionView, getPassport, updatePassportDraft, publishPassport, listPassportVersions, getPassportVersion,
  importPassports, type PassportAccessKeyView, issuePassportAccessKey, revokePassportAccessKey, listPassportAccessKeysOf, type PassportReader, type
  PublishedPassport, type PassportReads, createPassportReads, setPassportStyle, publishedPassportHeads, type PublishedPassportHeads,
  rotatePassportSigningKey, type PassportSigner, createPassportSigner, presignPassportCredentials,
} from './passports/index.ts';
export {
  createResolver, createScanRecorder, type Resolution, type Resolver, type ScanRecorderOptions, replaySpilledScans, type ScanSpillPort,
  createEdgeLogShipper,
} from './resolver/index.ts';
export {
  recordScanEvents, createScanAlerts, ruleScanOf, type ScanAlerts, getScanStats, getUnitScans, maintainScanLedger, getScanAlertSettings,
  updateScanAlertSettings, clearSuspectUnit,
} from './scans/index.ts';
export {
  createWebhookEndpoint, listWebhookEndpointsOf, updateWebhookEndpointOf, deleteWebhookEndpointOf, rotateWebhookSecret, listWebhookDeliveriesOf,
  redeliverWebhook, sealWebhookSecrets, type WebhookSettings, type WebhookEndpointView, createWebhookSender, type WebhookSend, type
  WebhookNetworkPolicy, claimWebhooks, deliverWebhook, webhookBacklog, fanOutWebhookEvents, drainWebhookFanout, defaultWebhookFanout,
  type WebhookFanoutOptions, type WebhookFanoutPass,
} from './webhooks/index.ts';
