// `mintctl passport edit --publish`, `versions` and `issue-key`, run as the real process against a
// running API: the content file becomes version 1 with its digest, and a credential is issued.

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startApi, type RunningApi } from '@mint/api';
import { createLogger } from '@mint/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../test/support/sql.ts';
import { setupUseCases, testJwtSecret, testWebhookSecretKeys, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
let app: UseCaseBundle;
let api: RunningApi;
let brand: SeededBrand;
const dir = mkdtempSync(join(tmpdir(), 'mintctl-passport-'));

async function mintctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [main, ...args], {
      env: {
        ...process.env,
        MINT_API_URL: `http://127.0.0.1:${api.port}`,
        MINT_TOKEN: brand.token,
        MINT_BRAND: brand.brandId,
        MINTCTL_CONFIG: join(dir, 'login.json'),
      },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  api = await startApi({
    ctx: app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 2_000 },
    logger: createLogger({ logLevel: 'silent' }, {}, new Writable({ write: (_c, _e, done) => done() })),
    readiness: async () => ({ ok: true, checks: {} }),
  });
});
afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe('mintctl passport', () => {
  it('publishes a content file as version 1, lists it, refuses a bad file naming the field, and issues a credential', async () => {
    const file = join(dir, 'passport.json');
    writeFileSync(file, JSON.stringify({ description: { en: 'A kettle' }, emissions: { carbonFootprint: 3.2, declaredUnit: 'EA', method: 'ISO 14067' } }));
    const published = await mintctl('passport', 'edit', '--product', brand.productId, '--file', file, '--publish');
    expect(published.code, published.stderr).toBe(0);
    const out = JSON.parse(published.stdout) as { published: boolean; version: { version: number; sha256: string } };
    expect([out.published, out.version.version, out.version.sha256]).toEqual([true, 1, expect.stringMatching(/^[0-9a-f]{64}$/)]);
    const versions = JSON.parse((await mintctl('passport', 'versions', '--product', brand.productId)).stdout) as { versions: { version: number }[] };
    expect(versions.versions.map((v) => v.version)).toEqual([1]);
    writeFileSync(file, JSON.stringify({ description: { en: 'A kettle' }, materials: [{ name: { en: 'Steel' }, massFraction: 7 }] }));
    const bad = await mintctl('passport', 'edit', '--product', brand.productId, '--file', file);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('content.materials[0].massFraction: must be a number from 0 to 1')]);
    const key = await mintctl('passport', 'issue-key', '--name', 'Repair Co', '--class', 'legitimate_interest', '--days', '30');
    expect(key.code, key.stderr).toBe(0);
    expect((JSON.parse(key.stdout) as { key: string }).key).toMatch(/^pp_/);
  }, 60_000);

  it('imports a JSON document of levels by GTIN and publishes them, reads a level and a version, lists and revokes a credential', async () => {
    const file = join(dir, 'import.json');
    writeFileSync(
      file,
      JSON.stringify({
        entries: [
          { gtin: brand.gtin, lot: 'L7', content: { emissions: { carbonFootprint: 2.9, declaredUnit: 'EA', method: 'ISO 14067' } } },
          {
            product_id: brand.productId,
            serial: 'S-CLI-1',
            content: { extensions: [{ term: 'https://example.com/voc#stateOfHealth', name: { en: 'State of health' }, value: 99, unit: 'P1' }] },
          },
        ],
      }),
    );
    const imported = await mintctl('passport', 'import', '--file', file, '--publish');
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ ok: true, drafts: 2, published: 2 });
    const lot = JSON.parse((await mintctl('passport', 'get', '--product', brand.productId, '--lot', 'L7')).stdout) as {
      latest: { version: number; lot: string; content: { emissions: { carbonFootprint: number } } };
    };
    expect([lot.latest.version, lot.latest.lot, lot.latest.content.emissions.carbonFootprint]).toEqual([1, 'L7', 2.9]);
    const version = JSON.parse((await mintctl('passport', 'version', '--product', brand.productId, '--serial', 'S-CLI-1', '--version', '1')).stdout) as {
      version: { serial: string; sha256: string };
    };
    expect([version.version.serial, version.version.sha256]).toEqual(['S-CLI-1', expect.stringMatching(/^[0-9a-f]{64}$/)]);
    // A bad entry names its place in the document and publishes nothing.
    writeFileSync(
      file,
      JSON.stringify([
        { gtin: brand.gtin, lot: 'L8', content: { description: { en: 'ok' } } },
        { gtin: brand.gtin, lot: 'L9', content: { productionDate: 'yesterday' } },
      ]),
    );
    const bad = await mintctl('passport', 'import', '--file', file, '--publish');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/entries\[1\]\.content\.productionDate/)]);
    expect(JSON.parse((await mintctl('passport', 'get', '--product', brand.productId, '--lot', 'L8')).stdout).latest).toBeUndefined();
    const issued = JSON.parse((await mintctl('passport', 'issue-key', '--name', 'Customs', '--class', 'authority', '--days', '7')).stdout) as {
      credential: { id: string };
    };
    const keys = JSON.parse((await mintctl('passport', 'keys')).stdout) as { credentials: { id: string; name: string }[] };
    expect(keys.credentials.map((k) => k.name)).toContain('Customs');
    expect(JSON.stringify(keys)).not.toContain('pp_');
    const revoked = JSON.parse((await mintctl('passport', 'revoke-key', '--id', issued.credential.id)).stdout) as {
      credential: { id: string; revokedAt?: string };
    };
    expect([revoked.credential.id, typeof revoked.credential.revokedAt]).toEqual([issued.credential.id, 'string']);
  }, 90_000);

  it('rotates the signing key against the database, keeping the old one', async () => {
    const env = {
      ...process.env,
      DATABASE_URL: app.database.url,
      AUTH_JWT_SECRET: testJwtSecret,
      WEBHOOK_SECRET_KEYS: testWebhookSecretKeys,
      LOG_LEVEL: 'warn',
    };
    const run = () => promisify(execFile)(process.execPath, [main, 'passport', 'rotate-signing-key'], { env, timeout: 20_000 });
    // The API of the first test may have made the first key already, signing its publish's credentials.
    const keysNow = () =>
      query<{ retired: boolean }>(app.db.em.fork(), 'select retired_at is not null as retired from passport_signing_keys order by created_at');
    const before = (await keysNow()).length;
    const first = await run();
    const second = await run();
    expect(first.stdout).toMatch(/^passport credentials are now signed with key \S+\n$/);
    expect(second.stdout).not.toBe(first.stdout);
    const keys = await keysNow();
    expect(keys.length).toBe(before + 2);
    expect(keys.map((k) => k.retired)).toEqual([...Array(keys.length - 1).fill(true), false]);
  }, 60_000);
});
