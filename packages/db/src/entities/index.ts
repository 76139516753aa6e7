import { ApiKey, Brand, Membership, User } from './workspace.ts';
import { ImportKey, Product, ProductImport, ProductionBatch } from './catalog.ts';
import { BrandSerialKey, MintBatch, MintJob, MintKpis, MintLot, MintPreflight, MintUnit } from './minting.ts';
import { IdempotencyRecord, MintEvent, OutboxMessage, PayloadPack } from './activity.ts';
import { ScanAlertSettingsRow, ScanDailyRollup, ScanEvent, ScanIngestBatch, ScanRollupDay } from './scans.ts';
import { ResolverLink } from './links.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookFanout } from './webhooks.ts';
import { PassportAccessKey, PassportDraft, PassportSigningKey, PassportVersion } from './passports.ts';
import { EpcisEventRow, SerialMoveRefusalRow, SerialMoveRow, UnitStateRow } from './serials.ts';
import { ContainerMintRow, ContainerOpRow, ContainerRow, ContainerSettingsRow, UnitContainerRow } from './containers.ts';
import { AllocationFloorRow, AllocationRequestRow, PartnerGrantRow, PartnerRow, UnitAllocationRow } from './partners.ts';

/** Every entity of the schema, for the ORM configuration. */
export const entities = [
  Brand,
  User,
  Membership,
  ApiKey,
  Product,
  ProductionBatch,
  ProductImport,
  ImportKey,
  MintPreflight,
  MintJob,
  MintBatch,
  BrandSerialKey,
  MintLot,
  MintUnit,
  MintKpis,
  MintEvent,
  PayloadPack,
  OutboxMessage,
  IdempotencyRecord,
  ScanEvent,
  ScanIngestBatch,
  ScanAlertSettingsRow,
  ScanDailyRollup,
  ScanRollupDay,
  ResolverLink,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookFanout,
  PassportDraft,
  PassportVersion,
  PassportAccessKey,
  PassportSigningKey,
  UnitStateRow,
  SerialMoveRow,
  SerialMoveRefusalRow,
  EpcisEventRow,
  ContainerSettingsRow,
  ContainerMintRow,
  ContainerRow,
  UnitContainerRow,
  ContainerOpRow,
  PartnerRow,
  PartnerGrantRow,
  AllocationRequestRow,
  UnitAllocationRow,
  AllocationFloorRow,
];
