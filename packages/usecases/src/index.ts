export { createUseCaseContext, defaultMaxTokenLifetimeSeconds, type AuthSettings, type UseCaseContext, type UseCaseContextOptions, type Actor, type PublishedJob } from './context.ts';
export {
  authenticateBearer, verifyApiKey, recordApiKeyUse, roleOnBrand, issueAccessToken, clockSkewSeconds, type ApiKeyPrincipal,
  apiKeyUseIntervalMs
} from './auth.ts';
export {
  authenticate, authorizeAuthenticated, authorize, missingCredentialsMessage, listMyMemberships, type Credentials, type Caller, type Authenticated, type AuthorizeOptions,
  type MembershipView, type OperationAccess, partnerKeyRefusal
} from './access.ts';
export { submitMintRequest, type SubmitOptions, type SubmitResult } from './submit.ts';
export { preflightMintBatch, defaultPreflightIdentityMode, type PreflightInput, type PreflightView } from './preflight.ts';
export {
  claimMintJob, releaseMintJob, runMint, processMintJobBatch, sqlState, failMintJob, recordFailedAttempt, type CycleResult, type MintRunOptions, type ChunkCommitted, type LoadedJob,
  type ClaimResult
} from './processing.ts';
export { getMintBatch, listMintBatches, defaultBatchPageSize } from './batches.ts';
export {
  productViolations, upsertProduct, getProduct, listProducts, upsertProductionBatch, type ProductView, type ProductInput, defaultProductPageSize,
  type ProductionBatchView, type ProductionBatchInput
} from './catalog.ts';
export { getJobProgress, getMintJob, type MintJobView, watchMintJob, findJobsToSweep, defaultWatchSafetyIntervalMs, defaultWatchUpdateIntervalMs, type WatchOptions } from './jobs.ts';
export { createProgressHub, publishJobProgress, type JobProgress, type ProgressHub } from './progress.ts';
export { relayOutbox, outboxLag, type OutboxJob } from './outbox.ts';
export {
  createWorkspace, createUser, grantRole, createApiKey, seedDemo, listApiKeys, revokeApiKey, setApiAccess, type WorkspaceView, type DemoSeed
} from './workspace.ts';
export { listMintUnits, defaultUnitPageSize, type ListMintUnitsQuery } from './units.ts';
export { listMintEvents, defaultEventPageSize, type ListMintEventsQuery } from './events.ts';
export { listPayloadPacks, defaultPackPageSize, createPayloadPack, packLeftoverAgeMs, sweepPackStore, type CreatePayloadPackInput } from './packs.ts';
export {
  packFormatRegistry, epcisContext, maxEpcsPerEvent, type PackFormatEntry,
} from './pack-formats.ts';
export { packProfileOf, storedPackProfile } from './pack-profiles.ts';
export { getMintKpis } from './kpis.ts';
export {
  setMintBatchStatus, applyBatchMove, maxStatusReasonLength, type SetMintBatchStatusInput, type BatchChange
} from './lifecycle.ts';
export { activateMintUnits, maxActivationUnitIds, type ActivationTarget, type ActivationResult } from './activation.ts';
export {
  createMintBatchFromJob, createMintBatchFromJobDeprecation, type CreateMintBatchFromJobInput, type CreateMintBatchFromJobResult
} from './legacy.ts';
export { startProductImport, runProductImport, failProductImport, importBatchSize, importMayStart, findImportsToSweep } from './imports.ts';
export { parseCsvRecords, getProductImport, type ImportView, type ImportRunOutcome } from './import-runs.ts';
export {
  requestFingerprint, keyDerivedUuid, runIdempotently, purgeExpiredIdempotencyRecords, type KeptResponse, type IdempotentOutcome,
  type IdempotentResult, type SentResponse, type IdempotentRequest, submitWithIdempotencyKey, type KeyedMintRequest
} from './idempotency.ts';
export { submitAndKick, type SubmitAndKickResult } from './kick.ts';
export {
  claimPayloadPack, generatePayloadPack, packFiles, defaultPackLeaseMs, packUnitPageSize, type ManifestFile,
  type PackManifest, type PackGenerationOptions, type PackGenerationResult, type PackClaim
} from './pack-export.ts';
export { packColumns } from './pack-rows.ts';
export {
  packDownloadPath, parseDownloadPath, createPayloadPackDownloadUrl, openPayloadPackDownload, type DownloadSettings, downloadPrefix,
  type DownloadUrl, type DownloadAnswer
} from './downloads.ts';
export {
  createResolver, createScanRecorder, createLinkCache, type LinkCache, type Resolution, type ResolverOptions, type Resolver,
  type ScanRecorderStats, type ScanRecorder, type ScanRecorderOptions, replaySpilledScans, type ScanSpillPort, type ScanReplayerOptions,
} from './resolver.ts';
export { createLastKnownReader, type LastKnownOptions, type LastKnownReader } from './last-known.ts';
export {
  recordScanEvents, type RecordScanEventsInput, createScanAlerts, ruleScanOf, type ScanAlerts, getScanStats, type ScanStatsQuery, type ScanStatsPage, getUnitScans, type UnitScansQuery, type UnitScansPage,
  type ScanAlertsOptions, maintainScanLedger, type ScanLedgerUpkeep, type ScanLedgerUpkeepOptions
} from './scans.ts';
export {
  getScanAlertSettings, updateScanAlertSettings, clearSuspectUnit, type ClearSuspectUnitInput, type ClearSuspectUnitOutcome
} from './scan-settings.ts';
export {
  upsertLink, listLinks, deleteLink, replaceLinks, startLinkImport, getLinkImport, runLinkImport, linkImportColumns, defaultLinkPageSize,
  type LinkView, type LinkUpsertInput, type LinkListQuery, type ReplaceLinksInput
} from './links.ts';
export {
  createWebhookEndpoint, listWebhookEndpointsOf, updateWebhookEndpointOf, deleteWebhookEndpointOf, rotateWebhookSecret, listWebhookDeliveriesOf,
  redeliverWebhook, defaultDeliveryPageSize, defaultEndpointPageSize, defaultMaxWebhookEndpointsPerBrand, sealWebhookSecrets, webhookSecretContext, type WebhookSettings, type WebhookEndpointView, type NewWebhookEndpoint, type WebhookEndpointUpdate
} from './webhooks.ts';
export {
  createWebhookSender, addressAllowList, addressRefusal, type WebhookRequest, type WebhookResponse, type WebhookSend, type WebhookNetworkPolicy
} from './webhook-sender.ts';
export {
  claimWebhooks, deliverWebhook, webhookBacklog, defaultWebhookLeaseMs, defaultWebhookPerBrand, type WebhookClaimOptions, type WebhookDeliverOptions, type WebhookDeliveryResult
} from './webhook-delivery.ts';
export { setBrandResolverDomain, type BrandResolverDomainView } from './brand-domains.ts';
export {
  type PassportKeyInput, type PassportDraftView, type PassportVersionView, type PassportView, getPassport, type UpdatePassportDraftInput, updatePassportDraft,
  type PublishPassportOutcome, publishPassport, type PassportVersionPage, listPassportVersions, getPassportVersion, type PassportImportEntry,
  maxPassportImportEntries, importPassports, type PassportAccessKeyView, maxPassportKeyLifetimeMs, issuePassportAccessKey, revokePassportAccessKey,
  listPassportAccessKeysOf, type PassportReader, passportReaderOf, type PublishedPassport, readPublishedPassport, type PublishedPassportInput,
  type PassportReads, createPassportReads, setPassportStyle, publishedPassportHeads, type PublishedPassportHeads,
} from './passports.ts';
export { rotatePassportSigningKey, type PassportSigner, type PassportSignerOptions, createPassportSigner } from './passport-signing.ts';
export { createEdgeLogShipper, type EdgeLogShipper, type EdgeLogShipperOptions, type EdgeLogStats } from './edge-log.ts';
export {
  moveSerials, continueSerialMove, runSerialMoveChunk, getSerialMove, epcisEventsOf, epcisDocument, maxMoveSerials, serialMoveChunk,
  type SerialMoveTarget, type MoveSerialsInput, type RefusedUnit, type SerialMoveReport,
} from './serials.ts';
export {
  queryEpcis, captureEpcisDocument, epcisQueryParameters, defaultEpcisPage, maxEpcisPage, maxCapturedEvents, type EpcisQueryPage, type CaptureResult,
} from './epcis.ts';
export {
  reconcileMintBatch, reconciliationCsv, reconciliationPdf, reconciliationDocument, documentFormats, type DocumentFormat, type BatchReconciliation, type PartnerReconciliation, type ReconciliationDocument,
} from './reconciliation.ts';
export {
  createPartner, grantPartnerKey, listPartners, revokePartnerKey, allocateSerials, allocationEpcisEvents, getPartnerAllocation, type GrantPartnerKeyInput, type GrantedPartnerKey,
  type PartnerCaller, type AllocateSerialsInput, type SerialAllocation, type PartnerAllocationView,
} from './partners.ts';
