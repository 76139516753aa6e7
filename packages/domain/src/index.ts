export {
  DomainError, isDomainError, type ErrorKind, errorKinds,
  assertValid, type FieldViolation, InvalidInputError, IllegalStateError, NotFoundError, ConflictError, UnauthenticatedError, ForbiddenError,
  RateLimitedError, UnavailableError, isUnavailableError, unavailableRetryAfter, unavailableRetryAfterSeconds,
  IdempotencyKeyReusedError,
} from './errors.ts';
export { initialUnitStatus, type IdentityMode, identityModes, type ActivationMode, activationModes, type UnitStatus, unitStatuses } from './modes.ts';
export {
  isTerminalJobStatus, isSettledJobStatus, executorMovedJobStatuses, canMoveJob, type JobStatus, jobStatuses, terminalJobStatuses, type JobMove, enqueuePreflighted, claimJob, startProcessing,
  completeSerialJob, completeWithoutUnits, failJob
} from './job-status.ts';
export {
  canMoveBatch, moveBatch, printedStatuses, printedUnitsDelta, manualBatchMove, withdrawsUnits, type BatchStatus, batchStatuses, type BatchMove
} from './batch-status.ts';
export {
  isUuid, quantityViolations, lotViolations, validateMintRequest, maxRequestedQuantity, maxLots, type Lot, type MintRequest
} from './request.ts';
export {
  preflight, type BlockingCode, type BlockingReason, type PreflightProduct, type PreflightProductionBatch, type PreflightInput
} from './preflight.ts';
export {
  normalizeGtin, gtinCheckDigit, gtinViolations, type CommercialStatus, commercialStatuses, type MintReadinessStatus, mintReadinessStatuses,
  type ProductionBatchStatus, productionBatchStatuses
} from './catalog.ts';
export {
  generateSerials, generateTimedSerials, serialTimeLength, unitIdPrefix, unitIdOf, newMintBatchId, hasDerivedUnitIds, unitKeyOfId, unitResolverUrl, lotResolverUrl,
  brandResolverBaseUrl, serialLength, serialAlphabet, type RandomFill
} from './identity.ts';
export {
  serialCipherKeyBytes, serialCipherMaxOrdinal, serialCipherMaxSeq, type SerialPosition, type SerialCipher, generateSerialCipherKey, createSerialCipher
} from './serial-cipher.ts';
export { resolverDomainViolations, brandDomainBaseUrl, normalizeHost, maxDomainLength, type ReservedHosts } from './brand-domain.ts';
export { defaultChunkSize, kickUnitLimit, type Chunk } from './chunk.ts';
export {
  encodeCursor, decodeCursor, resolveCursor, resolvePageSize, toPage, type Cursor, maxPageSize, type CursorInput, type Page
} from './cursor.ts';
export {
  roleGrants, scopesGrant, type Role, roles, type Permission, permissions, type ApiKeyScope, apiKeyScopes, rolePermissions, lastOwnerRefusal, isRole
} from './access.ts';
export type { EventType, EntityType, NewEvent } from './events.ts';
export { retryDelayMs, attemptsExhausted, mintJobRetry, packRetry, busPullRetry, type RetryPolicy } from './retry.ts';
export {
  classifyMintError, decideMintFailure, isPermanentSqlState, type MintSetback, type MintFailureDecision, type MintDeliveryState
} from './mint-failure.ts';
export { generateApiKey, parseApiKey, hashApiKeySecret, passportKeyPrefix, type ParsedApiKey } from './api-key.ts';
export {
  leaseExpiry, isLeaseFree, decideClaim, defaultLeaseMs, type LeaseState, type Lease, type ClaimDecision, LeaseLostError,
  isLeaseLostError
} from './lease.ts';
export {
  importHeaderViolations, startImport, finishImport, type ImportStatus, importStatuses, maxImportBytes, maxImportErrorsKept, importColumns,
  type ImportColumn, requiredImportColumns, importEnumColumns, importEnumHint, importEnumValue, isImportEnumColumn, type ImportEnumColumn
} from './product-import.ts';
export {
  decideIdempotency, idempotencyKeyViolations, idempotencyRetentionMs, idempotencyStaleMs, maxIdempotencyKeyLength, type IdempotencyState,
  type KeptKey, type IdempotencyDecision
} from './idempotency.ts';
export { firstChunkUnits, missingAfterPrefix, planChunks, type ChunkPlanOptions, type SeqRange } from './chunk-plan.ts';
export {
  parseSigningKeys, signDownload, verifyDownload, downloadExpiry, type SigningKey, minSigningSecretBytes, defaultDownloadTtlSeconds,
  maxDownloadTtlSeconds, signingKeyIdPattern, type DownloadClaims, type DownloadSignature, type DownloadRefusal
} from './download-signature.ts';
export {
  type ResolverKey, type ResolverPath, resolverPrefix, type ParsedResolverRequest, parseResolverRequest, resolverRootPathOf, levelPaths, type LevelAnchors, levelAnchors, type LinkTypeRequest,
  readLinkType, type Representation, negotiate, type FoundIdentity, type ResolutionOutcome, decideResolution, resolutionStatus, gs1PipLinkType,
  gs1DefaultLinkType, gs1LinksetContext,
  forwardQuery, type ResolverDescriptionOptions, resolverDescription
} from './resolution.ts';
export {
  type LinkLevel, linkLevels, type LinkScope, type Link, type LinkInput, linkLimits, linkScopeOf, validateLink, linkSetViolations, withOneDefault,
  linkScopeKey, type LinkedLevel, acceptedLanguages, acceptedMediaTypes, type LinkPreferences, type LinkChoice, chooseAmong, pickAmong, chooseLink, chooseLevelLink, defaultLinkOf, linksetOf
} from './links.ts';
export { maxStoredUrlLength, storableUrlOf, storableUrlViolations } from './urls.ts';
export { gs1LinkTypeNames, gs1VocabularyVersion, type Gs1LinkTypeName, gs1VocabularyNamespace, gs1LinkTypeUri, gs1LinkTypeOf, gs1LinkTypeOfAnyCase } from './gs1-link-types.ts';
export { movePack, canDownloadPack, packStoragePath, type PackStatus, packStatuses, type PackMove } from './pack-status.ts';
export {
  packFormats, labelFormats, limitedFormats, maxLabelPackUnits, symbologies, papers, zplDpis, defaultLabelLayout, paperSizesMm, sheetLayoutViolation, minLabelSideMm, maxGridSide, packPurposes,
  completionPackProfile, voidPackProfile, packableBatchStatuses, assertPackableBatch, layoutViolations, rangeUnitCount, resolvePackProfile,
  type PackFormat, type Symbology, type Paper, type SheetLayout, type LabelLayout, type PackPurpose, type PackProfile, type PackProfileInput, type PackBatchFacts,
} from './pack-profile.ts';
export {
  webhookSecretPrefix, maxWebhookUrlLength, maxWebhookEventTypes, webhookSecretOverlapMs, webhookTimeoutMs, webhookMaxResponseBytes,
  webhookFailureWindowMs, webhookRetry, type WebhookDeliveryStatus, webhookDeliveryStatuses, isLoopbackHost, webhookUrlViolations,
  webhookEventTypeViolations, webhookWants, generateWebhookSecret, webhookMessageId, signWebhook, type WebhookAttemptDecision,
  type WebhookAttemptOutcome, decideWebhookAttempt, type WebhookBreakerPolicy, webhookBreaker, webhookPauseMs
} from './webhooks.ts';
export {
  sealedSecretPrefix, secretKeyBytes, SecretBoxError, isSecretBoxError, isSealedSecret, sealedSecretKeyId, parseSecretKeys, sealSecret, openSecret
} from './secret-box.ts';
export { type ScanFloodLimits, defaultScanFloodLimits, type ScanFloodFacts, type CountedScan, type ScanFloodGate, createScanFloodGate } from './scan-flood.ts';
export {
  type ClientClass, clientClasses, classifyUserAgent, countryOf, type ScanClient, type VisitorHasher, createVisitorHasher, scanKinds, scanOutcomes, scanRepresentations,
  maxIngestScans, type IngestScanInput, type IngestScan, type IngestRowError, validateIngestScan, type ScanGroup, scanGroups, encodeScanCursor, decodeScanCursor
} from './scan-ledger.ts';
export {
  type ScanRuleLimits, defaultScanRuleLimits, type RuleScan, type ScanRules, createScanRules
} from './scan-alerts.ts';
export {
  type ScanAlertRule, type ScanAlertSettings, defaultScanAlertSettings, type ScanAlertSettingsPatch, applyScanAlertSettings
} from './scan-alert-settings.ts';
export {
  edgeCacheSeconds, edgeCacheControl, allResolverAnswersKey, surrogateKeysOf, purgeKeyOf, encodeEdgeScan, decodeEdgeScan, type EdgeScan,
} from './edge-cache.ts';
export {
  type SerialState, serialStates, type DecommissionReason, decommissionReasons, publicDecommissionReasons, publicReasonOf, reactivatableReasons, type SerialAction, serialActions,
  mintedSerialState, isInCirculation, type SerialMove, encodeSerials, commissionSerials, scrapSerials, returnSerials, decommissionSerials,
  reactivateSerials, serialMoveOf, type SerialRefusal, refusalOf, moveOneSerial, activeDelta, publicStanding, type EpcisVocabulary, epcisVocabularyOf, epcisMoveVocabulary, capturedMoveRows, type EpcisMoveMapping,
} from './serial-state.ts';
export {
  maxAllocationQuantity, maxPartnerQuota, maxPartnerNameLength, partnerActions, isPartnerAction, partnerKeyScopes, type PartnerRestriction,
  partnerGrantViolations, quotaRefusal, allocationVocabulary,
} from './partner.ts';
export {
  type PassportAccessClass, passportAccessClasses, restrictedPassportClasses, type PassportLevel, type LocalText, type Measure, type PassportLink, type Party,
  type Material, type Emissions, type Circularity, type ConformityClaim, type DueDiligenceStatement, type PassportExtension, type Dimensions,
  type PassportContent, passportSections, type PassportSection, maxPassportBytes, type PassportContentResult, readPassportContent, canonicalJson,
  passportDigest, inheritPassport, sectionClass, classReads, type VisiblePassport, visiblePassport, localText, passportLanguages, passportLevelOf,
  passportKeyViolations, conformityTopics
} from './passport.ts';
export {
  passportCredentialContexts, type PassportCredentialInput, passportCredential, didWebOf, minStatusListBits, encodeStatusList, statusListCredential, statusListEntry,
  didDocument, passportStatusPath, passportStatusListUrl, type IdentityPassportInput, identityPassportCredential, credentialIssuerOf
} from './passport-credential.ts';
export {
  ssccLength, gs1CheckDigit, isSscc, ssccViolations, companyPrefixViolations, serialReferenceCapacity, ssccOf, containerUri, ssccOfUri,
  containerLevelViolations, defaultContainerMaxDepth, maxContainerMaxDepth, type ContainerState, containerStates, containerStateAfter,
  type PackRefusal, unitPackRefusal, containerPackRefusal, checkPackParent, aggregationVocabulary,
} from './containers.ts';
export { type EpcUnit, unitOfEpc, ssccOfEpc } from './epc-uri.ts';
