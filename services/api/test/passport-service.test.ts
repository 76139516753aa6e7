// PassportService: a product's passport written as a draft, published into immutable numbered
// versions (SHA-256 of the RFC 8785 canonical JSON, publisher, time, predecessor), earlier versions
// readable, a JSON import all or nothing, and credentials for an access class issued and revoked.

import { createHash } from 'node:crypto';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code } from '@connectrpc/connect';
import { PassportAccessClass, PassportLevel, PassportService } from '@mint/contract';
import * as grpc from '@grpc/grpc-js';
import { createApiKey } from '@mint/usecases';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { codeOf, errorOf, grpcUnaryCall, inProcessApi, startTestApi, type InProcessApi } from './support.ts';

let app: UseCaseBundle;
let brand: SeededBrand;
let other: SeededBrand;
let api: InProcessApi;

const asOwner = () => ({ headers: { authorization: `Bearer ${brand.token}` } });
const asKey = (key: string) => ({ headers: { 'x-api-key': key } });

const battery = {
  description: { en: 'Traction battery 300 Ah', de: 'Traktionsbatterie 300 Ah' },
  manufacturer: { name: 'Example Cells GmbH', id: 'https://example.com/company/42' },
  materials: [{ name: { en: 'Lithium', de: 'Lithium' }, massFraction: 0.05, recycledMassFraction: 0.12, hazardous: false }],
  emissions: { carbonFootprint: 61.5, declaredUnit: 'EA', method: 'EU Battery Regulation Annex II' },
  dueDiligence: [{ statement: { en: 'Cobalt sourced under OECD due-diligence guidance' } }],
  access: { dueDiligence: 'authority' },
};

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  other = await app.seedBrand();
  api = inProcessApi(app);
});
afterAll(() => app.close());

describe('drafts and versions', () => {
  it('publishes a draft as version 1 with the SHA-256 of its canonical JSON, then 2 with its predecessor; a repeat publishes nothing', async () => {
    const key = { brandId: brand.brandId, productId: brand.productId };
    const empty = await api.passports.getPassport(key, asOwner());
    expect([empty.level, empty.draft, empty.latest]).toEqual([PassportLevel.MODEL, undefined, undefined]);

    const draft = await api.passports.updatePassportDraft({ ...key, content: battery, expectedRevision: 0 }, asOwner());
    expect(draft.draft?.revision).toBe(1);
    const first = await api.passports.publishPassport(key, asOwner());
    expect(first.published).toBe(true);
    expect(first.version?.version).toBe(1);
    expect(first.version?.sha256).toBe(createHash('sha256').update(canonicalize(battery)!).digest('hex'));
    expect(first.version?.publishedBy).toBe(brand.userId);
    expect(first.version?.predecessorId).toBeUndefined();

    const again = await api.passports.publishPassport(key, asOwner());
    expect([again.published, again.version?.version]).toEqual([false, 1]);

    // A stale edit (revision 0 again) loses its compare-and-set; the current revision wins.
    expect(await codeOf(api.passports.updatePassportDraft({ ...key, content: battery, expectedRevision: 0 }, asOwner()))).toBe(Code.Aborted);
    const changed = { ...battery, emissions: { ...battery.emissions, carbonFootprint: 58.2 } };
    await api.passports.updatePassportDraft({ ...key, content: changed, expectedRevision: 1 }, asOwner());
    const second = await api.passports.publishPassport(key, asOwner());
    expect([second.published, second.version?.version, second.version?.predecessorId]).toEqual([true, 2, first.version?.id]);

    // The earlier version stays as it was published.
    const v1 = await api.passports.getPassportVersion({ ...key, version: 1 }, asOwner());
    expect(v1.version?.content).toEqual(battery);
    const list = await api.passports.listPassportVersions({ ...key, limit: 1 }, asOwner());
    expect(list.versions.map((v) => v.version)).toEqual([2]);
    const rest = await api.passports.listPassportVersions({ ...key, limit: 1, before: list.nextBefore }, asOwner());
    expect([rest.versions.map((v) => v.version), rest.nextBefore]).toEqual([[1], undefined]);

    const events = await query<{ event_type: string }>(
      app.db.em.fork(),
      `select event_type from mint_events where brand_id = ? and entity_type = 'passport' order by occurred_at, event_type`,
      [brand.brandId],
    );
    expect(events.map((e) => e.event_type).filter((t) => t === 'passport_published')).toHaveLength(2);
  });

  it('refuses bad content naming each field and writes nothing', async () => {
    const key = { brandId: brand.brandId, productId: brand.productId, lot: 'L-BAD' };
    const error = await errorOf(
      api.passports.updatePassportDraft(
        {
          ...key,
          content: {
            materials: [{ name: { en: 'Steel' }, massFraction: 2 }],
            circularity: { repairInstructions: { url: 'ftp://x' } },
            access: { materials: 'everyone' },
          },
        },
        asOwner(),
      ),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain('content.materials[0].massFraction: must be a number from 0 to 1');
    expect(error.rawMessage).toContain('content.circularity.repairInstructions.url: must be an absolute https URL');
    expect(error.rawMessage).toContain('content.access.materials: must be one of public, legitimate_interest, authority');
    expect((await api.passports.getPassport(key, asOwner())).draft).toBeUndefined();
    expect(await codeOf(api.passports.publishPassport(key, asOwner()))).toBe(Code.FailedPrecondition);
  });

  it('keeps another brand out: its product is not found, and products:read cannot edit', async () => {
    expect(await codeOf(api.passports.getPassport({ brandId: brand.brandId, productId: other.productId }, asOwner()))).toBe(Code.NotFound);
    const reader = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'reader', scopes: ['products:read'] })).key;
    const key = { brandId: brand.brandId, productId: brand.productId };
    expect(await codeOf(api.passports.getPassport(key, asKey(reader)))).toBe('ok');
    expect(await codeOf(api.passports.updatePassportDraft({ ...key, content: battery }, asKey(reader)))).toBe(Code.PermissionDenied);
    expect(await codeOf(api.passports.publishPassport(key, asKey(reader)))).toBe(Code.PermissionDenied);
  });
});

describe('ImportPassports', () => {
  it('writes and publishes a lot and a unit level by GTIN, all or nothing', async () => {
    const bad = await errorOf(
      api.passports.importPassports(
        {
          brandId: brand.brandId,
          publish: true,
          entries: [
            { gtin: brand.gtin, lot: 'L-IMPORT', content: { emissions: { carbonFootprint: 40, declaredUnit: 'EA', method: 'PEF' } } },
            { gtin: '4006381333931', serial: 'S1', content: {} },
            { productId: brand.productId, serial: 'S2', content: { description: { english: 'x' } } },
          ],
        },
        asOwner(),
      ),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain('entries[1].gtin');
    expect(bad.rawMessage).toContain('entries[2].content.description.english');
    expect((await api.passports.getPassport({ brandId: brand.brandId, productId: brand.productId, lot: 'L-IMPORT' }, asOwner())).draft).toBeUndefined();

    const done = await api.passports.importPassports(
      {
        brandId: brand.brandId,
        publish: true,
        entries: [
          { gtin: brand.gtin, lot: 'L-IMPORT', content: { emissions: { carbonFootprint: 40, declaredUnit: 'EA', method: 'PEF' } } },
          {
            productId: brand.productId,
            serial: 'S2',
            content: { extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health' }, value: 96, unit: 'P1' }] },
          },
        ],
      },
      asOwner(),
    );
    expect([done.drafts, done.published]).toEqual([2, 2]);
    const unit = await api.passports.getPassport({ brandId: brand.brandId, productId: brand.productId, serial: 'S2' }, asOwner());
    expect([unit.level, unit.latest?.version, unit.latest?.level]).toEqual([PassportLevel.UNIT, 1, PassportLevel.UNIT]);
  });
});

describe('access credentials', () => {
  it('issues an expiring credential for a class (shown once), lists it without its key, and revokes it', async () => {
    const expiresAt = timestampFromDate(new Date(Date.now() + 30 * 86_400_000));
    const issued = await api.passports.issuePassportAccessKey(
      { brandId: brand.brandId, name: 'Repair Co', accessClass: PassportAccessClass.LEGITIMATE_INTEREST, expiresAt },
      asOwner(),
    );
    expect(issued.key).toMatch(/^pp_/);
    const listed = await api.passports.listPassportAccessKeys({ brandId: brand.brandId }, asOwner());
    expect(listed.credentials.map((c) => [c.name, c.accessClass, c.revokedAt])).toEqual([['Repair Co', PassportAccessClass.LEGITIMATE_INTEREST, undefined]]);
    expect(JSON.stringify(listed, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(issued.key.slice(16));
    const revoked = await api.passports.revokePassportAccessKey({ brandId: brand.brandId, credentialId: issued.credential!.id }, asOwner());
    expect(revoked.credential?.revokedAt).toBeDefined();
    expect(
      await codeOf(
        api.passports.revokePassportAccessKey(
          { brandId: other.brandId, credentialId: issued.credential!.id },
          { headers: { authorization: `Bearer ${other.token}` } },
        ),
      ),
    ).toBe(Code.NotFound);
    const tooLong = await errorOf(
      api.passports.issuePassportAccessKey(
        {
          brandId: brand.brandId,
          name: 'x',
          accessClass: PassportAccessClass.AUTHORITY,
          expiresAt: timestampFromDate(new Date(Date.now() + 400 * 86_400_000)),
        },
        asOwner(),
      ),
    );
    expect(tooLong.rawMessage).toContain('expires_at');
    const style = await errorOf(api.passports.setPassportStyle({ brandId: brand.brandId, logoUrl: 'http://logo.example/x.png', colour: 'blue' }, asOwner()));
    expect([style.code, style.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining('logo_url: must be an absolute https URL')]);
    expect(style.rawMessage).toContain('colour: must be a colour as #rrggbb');
    expect((await api.passports.setPassportStyle({ brandId: brand.brandId, logoUrl: 'https://logo.example/x.png', colour: '#AABBCC' }, asOwner())).colour).toBe(
      '#aabbcc',
    );
    // An API key, whatever its scopes, cannot hand out passport credentials.
    const admin = (await createApiKey(app.ctx, { brandId: brand.brandId, name: 'all', scopes: ['products:write', 'products:read'] })).key;
    expect(await codeOf(api.passports.listPassportAccessKeys({ brandId: brand.brandId }, asKey(admin)))).toBe(Code.PermissionDenied);
  });
});

describe('/v1/rpc passport operations', () => {
  it('edits, publishes and reads a lot passport as named operations, with the snake_case shapes', async () => {
    const server = await startTestApi(app);
    try {
      const post = async (op: string, body: Record<string, unknown>) => {
        const response = await fetch(`${server.baseUrl}/v1/rpc/${op}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      };
      const key = { _brand_id: brand.brandId, _product_id: brand.productId, _lot: 'L-V1' };
      const edited = await post('update_passport_draft', { ...key, _content: { description: { en: 'Lot via /v1' } } });
      expect([edited.status, edited.body.draft?.revision]).toEqual([200, 1]);
      const published = await post('publish_passport', key);
      expect([published.status, published.body.published, published.body.version?.version, published.body.version?.level]).toEqual([200, true, 1, 'lot']);
      const read = await post('get_passport_version', { ...key, _version: 1 });
      expect(read.body.version?.content).toEqual({ description: { en: 'Lot via /v1' } });
      const bad = await post('update_passport_draft', { ...key, _content: { description: 'plain' } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('content.description');
    } finally {
      await server.close();
    }
  });
});

describe('access credentials on every surface', () => {
  it('issues, lists and revokes a credential over gRPC and as /v1 named operations; the key is shown once and never listed', async () => {
    const server = await startTestApi(app);
    try {
      const auth = { authorization: `Bearer ${brand.token}` };
      const issued = await grpcUnaryCall(
        server.port,
        PassportService.method.issuePassportAccessKey,
        {
          brandId: brand.brandId,
          name: 'Customs office',
          accessClass: PassportAccessClass.AUTHORITY,
          expiresAt: timestampFromDate(new Date(Date.now() + 7 * 86_400_000)),
        },
        auth,
      );
      if (!('response' in issued)) throw new Error(`grpc ${issued.error.code} ${issued.error.details}`);
      expect(issued.response.key).toMatch(/^pp_/);
      const listed = await grpcUnaryCall(server.port, PassportService.method.listPassportAccessKeys, { brandId: brand.brandId }, auth);
      if (!('response' in listed)) throw new Error(`grpc ${listed.error.code} ${listed.error.details}`);
      expect(listed.response.credentials.map((c) => c.id)).toContain(issued.response.credential!.id);
      const refused = await grpcUnaryCall(
        server.port,
        PassportService.method.issuePassportAccessKey,
        {
          brandId: brand.brandId,
          name: 'x',
          accessClass: PassportAccessClass.AUTHORITY,
        },
        auth,
      );
      expect('error' in refused && refused.error.code).toBe(grpc.status.INVALID_ARGUMENT);
      const post = async (op: string, body: Record<string, unknown>) => {
        const response = await fetch(`${server.baseUrl}/v1/rpc/${op}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      };
      const viaV1 = await post('issue_passport_access_key', {
        _brand_id: brand.brandId,
        _name: 'Recycler',
        _access_class: 'legitimate_interest',
        _expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      });
      expect([viaV1.status, viaV1.body.key]).toEqual([200, expect.stringMatching(/^pp_/)]);
      const list = await post('list_passport_access_keys', { _brand_id: brand.brandId });
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(viaV1.body.key as string);
      const revoked = await post('revoke_passport_access_key', { _brand_id: brand.brandId, _credential_id: viaV1.body.credential.id });
      expect([revoked.status, typeof revoked.body.credential?.revoked_at]).toEqual([200, 'string']);
      const gone = await grpcUnaryCall(
        server.port,
        PassportService.method.revokePassportAccessKey,
        { brandId: brand.brandId, credentialId: issued.response.credential!.id },
        auth,
      );
      expect('response' in gone && gone.response.credential?.revokedAt !== undefined).toBe(true);
      // Another brand's owner cannot list them.
      const otherBrand = await fetch(`${server.baseUrl}/v1/rpc/list_passport_access_keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${other.token}` },
        body: JSON.stringify({ _brand_id: brand.brandId }),
      });
      expect(otherBrand.status).toBe(403);
    } finally {
      await server.close();
    }
  });
});
