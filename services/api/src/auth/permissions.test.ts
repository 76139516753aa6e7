import { getOption, hasOption, type DescMethod, type DescService } from '@bufbuild/protobuf';
import * as contract from '@mint/contract';
import {
  AccountService,
  CatalogService,
  MintService,
  PassportService,
  ResolverService,
  ScanService,
  WebhookService,
  WorkspaceService,
  PartnerService,
} from '@mint/contract';
import type { Permission } from '@mint/domain';
import { describe, expect, it } from 'vitest';
import { Health } from '@mint/http';
import { contractServices, declaredPermission, partnerAccessOf, rpcPermissions } from '@mint/wire';
import { permissionFor } from './permissions.ts';

const protectedServices = [MintService, CatalogService, ResolverService, WebhookService, ScanService, PassportService, WorkspaceService, PartnerService];

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
    expect(byPermission('mint:write')).toEqual([
      'ActivateMintUnits',
      'AllocateSerials',
      'CreateMintBatchFromJob',
      'CreatePayloadPack',
      'MintContainers',
      'MoveSerials',
      'PackContainer',
      'PreflightMintBatch',
      'ProcessMintJobBatch',
      'ReturnUnusedSerials',
      'SetMintBatchStatus',
      'SubmitMintRequest',
      'UnpackContainer',
    ]);
    expect(byPermission('mint:read')).toEqual([
      'CreatePayloadPackDownloadUrl',
      'GetContainer',
      'GetMintBatch',
      'GetMintBatchReconciliation',
      'GetMintBatchReconciliationDocument',
      'GetMintJob',
      'GetMintKpis',
      'GetPartnerAllocation',
      'GetSerialMove',
      'ListMintBatches',
      'ListMintEvents',
      'ListMintUnits',
      'ListPayloadPacks',
      'WatchMintJob',
    ]);
    expect(byPermission('products:write')).toEqual([
      'ImportPassports',
      'PublishPassport',
      'StartProductImport',
      'UpdatePassportDraft',
      'UpsertProduct',
      'UpsertProductionBatch',
    ]);
    expect(byPermission('products:read')).toEqual([
      'GetPassport',
      'GetPassportVersion',
      'GetProduct',
      'GetProductImport',
      'ListPassportVersions',
      'ListProducts',
    ]);
    expect(byPermission('links:write')).toEqual(['DeleteLink', 'ReplaceLinks', 'StartLinkImport', 'UpsertLink']);
    expect(byPermission('links:read')).toEqual(['GetLinkImport', 'ListLinks']);
    expect(byPermission('scans:write')).toEqual(['RecordScanEvents']);
    expect(byPermission('scans:read')).toEqual(['GetScanAlertSettings', 'GetScanStats', 'GetUnitScans']);
    expect(byPermission('scans:manage')).toEqual(['ClearSuspectUnit', 'UpdateScanAlertSettings']);
    expect(byPermission('workspace:admin')).toEqual([
      'AddBrandMember',
      'CreateApiKey',
      'CreatePartner',
      'GrantPartnerKey',
      'IssuePassportAccessKey',
      'ListApiKeys',
      'ListBrandMembers',
      'ListPartners',
      'ListPassportAccessKeys',
      'RemoveBrandMember',
      'RevokeApiKey',
      'RevokePartnerKey',
      'RevokePassportAccessKey',
      'SetBrandMemberRole',
      'SetBrandResolverDomain',
      'SetContainerSettings',
      'SetPassportStyle',
    ]);
  });

  it('lets a partner key call only the RPCs marked (mint.v1.partner_access): allocate, its grant, MoveSerials, GetSerialMove, the bulk return and the containers it packs', () => {
    const marked = contractServices.flatMap((s) => s.methods.filter((m) => partnerAccessOf(m)).map((m) => `${s.name}/${m.name}`)).sort();
    expect(marked).toEqual([
      'MintService/GetContainer',
      'MintService/GetSerialMove',
      'MintService/MintContainers',
      'MintService/MoveSerials',
      'MintService/PackContainer',
      'MintService/UnpackContainer',
      'PartnerService/AllocateSerials',
      'PartnerService/GetPartnerAllocation',
      'PartnerService/ReturnUnusedSerials',
    ]);
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

describe('the permission declarations of the contract', () => {
  it('finds every service of the contract among its exports, not from a list', () => {
    const exported = (Object.values(contract) as unknown[]).filter(
      (v): v is DescService => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'service',
    );
    expect(contractServices.map((s) => s.typeName).sort()).toEqual(exported.map((s) => s.typeName).sort());
    expect(contractServices.length).toBeGreaterThanOrEqual(6);
  });

  it('has a (mint.v1.permission) option naming a known permission (or session) on every method of every service', () => {
    const undeclared = contractServices.flatMap((s) => s.methods.filter((m) => !hasOption(m, contract.permission)).map((m) => `${s.typeName}/${m.name}`));
    expect(undeclared).toEqual([]);
    const unknown = contractServices.flatMap((s) =>
      s.methods.filter((m) => declaredPermission(m) === undefined).map((m) => `${s.typeName}/${m.name}: ${getOption(m, contract.permission)}`),
    );
    expect(unknown).toEqual([]);
  });

  it('refuses a method without the option (deny by default): a method of a service compiled without it has no permission', () => {
    const bare = { ...MintService.method.getMintKpis, proto: { ...MintService.method.getMintKpis.proto, options: undefined } } as unknown as DescMethod;
    expect(declaredPermission(bare)).toBeUndefined();
    expect(permissionFor(bare)).toBeUndefined();
  });
});
