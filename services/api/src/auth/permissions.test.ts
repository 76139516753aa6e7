import { AccountService, CatalogService, MintService, PassportService, ResolverService, ScanService, WebhookService } from '@mint/contract';
import type { Permission } from '@mint/domain';
import { describe, expect, it } from 'vitest';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import { permissionFor, rpcPermissions } from './permissions.ts';

const protectedServices = [MintService, CatalogService, ResolverService, WebhookService, ScanService, PassportService];

describe('the RPC permission table', () => {
  it('has an entry for every RPC of every protected service in the descriptors', () => {
    const missing = protectedServices.flatMap((s) => s.methods.filter((m) => permissionFor(m) === undefined).map((m) => `${s.typeName}/${m.name}`));
    expect(missing).toEqual([]);
    expect([...rpcPermissions.keys()].sort()).toEqual(protectedServices.map((s) => s.typeName).sort());
  });

  it('has no entry for an RPC that does not exist', () => {
    for (const [service, table] of rpcPermissions) {
      const known = protectedServices.find((s) => s.typeName === service)!.methods.map((m) => m.localName);
      expect(Object.keys(table).filter((name) => !known.includes(name))).toEqual([]);
    }
  });

  it('needs mint:write for changes, mint:read for reads, products:* for the catalog, links:* for the resolver links', () => {
    const byPermission = (permission: Permission) =>
      protectedServices.flatMap((s) => s.methods.filter((m) => permissionFor(m) === permission).map((m) => m.name)).sort();
    expect(byPermission('mint:write')).toEqual(
      ['ActivateMintUnits', 'CreateMintBatchFromJob', 'CreatePayloadPack', 'PreflightMintBatch', 'ProcessMintJobBatch', 'SetMintBatchStatus', 'SubmitMintRequest'],
    );
    expect(byPermission('mint:read')).toEqual(
      ['CreatePayloadPackDownloadUrl', 'GetMintBatch', 'GetMintJob', 'GetMintKpis', 'ListMintBatches', 'ListMintEvents', 'ListMintUnits', 'ListPayloadPacks', 'WatchMintJob'],
    );
    expect(byPermission('products:write')).toEqual(['ImportPassports', 'PublishPassport', 'StartProductImport', 'UpdatePassportDraft', 'UpsertProduct', 'UpsertProductionBatch']);
    expect(byPermission('products:read')).toEqual(['GetPassport', 'GetPassportVersion', 'GetProduct', 'GetProductImport', 'ListPassportVersions', 'ListProducts']);
    expect(byPermission('links:write')).toEqual(['DeleteLink', 'ReplaceLinks', 'StartLinkImport', 'UpsertLink']);
    expect(byPermission('links:read')).toEqual(['GetLinkImport', 'ListLinks']);
    expect(byPermission('scans:write')).toEqual(['RecordScanEvents']);
    expect(byPermission('scans:read')).toEqual(['GetScanAlertSettings', 'GetScanStats', 'GetUnitScans']);
    expect(byPermission('scans:manage')).toEqual(['ClearSuspectUnit', 'UpdateScanAlertSettings']);
  });

  it('every protected RPC names its brand in brand_id, the field authorization reads', () => {
    const without = protectedServices.flatMap((s) => s.methods.filter((m) => m.input.field['brandId']?.name !== 'brand_id').map((m) => m.name));
    expect(without).toEqual([]);
  });

  it('lets any verified session call the account service, which names no brand', () => {
    expect(AccountService.methods.map((m) => permissionFor(m))).toEqual(['authenticated']);
    expect(AccountService.methods.filter((m) => m.input.field['brandId'] !== undefined)).toEqual([]);
  });

  it('keeps the health service public', () => {
    expect(Health.methods.map((m) => permissionFor(m))).toEqual(['public', 'public']);
  });
});
