// `mintctl apikey create|list|revoke` and `mintctl workspace enable-api`, run as the real process
// (node services/cli/src/main.ts) against a fresh database; the keys it prints are checked with
// the API's enforcement function.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createWorkspace, verifyApiKey } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, testJwtSecret, type UseCaseBundle } from '../../../test/support/usecases.ts';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
let app: UseCaseBundle;
let brandId: string;

/** Runs mintctl; resolves with its exit code and output (never rejects). */
async function mintctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [main, ...args], {
      env: { ...process.env, DATABASE_URL: app.database.url, AUTH_JWT_SECRET: testJwtSecret, LOG_LEVEL: 'warn' },
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
  brandId = (await createWorkspace(app.ctx, { name: 'CLI Brand' })).id;
});

afterAll(async () => {
  await app?.close();
});

describe('mintctl apikey and workspace', () => {
  it('creates a scoped key shown once, lists it without its secret, enables API access, and revokes it', async () => {
    const created = await mintctl('apikey', 'create', '--brand', brandId, '--name', 'ci', '--scopes', 'mint:read,products:read');
    expect(created.code).toBe(0);
    const { id, api_key: key, scopes } = JSON.parse(created.stdout) as { id: string; api_key: string; scopes: string[] };
    expect(key).toMatch(/^mk_[0-9a-z]{12}_[0-9a-z]{36}$/);
    expect(scopes).toEqual(['mint:read', 'products:read']);

    const listed = await mintctl('apikey', 'list', '--brand', brandId);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.slice(16));
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ id, name: 'ci', prefix: key.slice(0, 15), revokedAt: null, lastUsedAt: null });

    // Early access: the workspace's keys are refused until API access is enabled.
    await expect(verifyApiKey(app.ctx, key)).rejects.toThrow(/not enabled for this workspace/);
    expect((await mintctl('workspace', 'enable-api', '--brand', brandId)).code).toBe(0);
    await expect(verifyApiKey(app.ctx, key)).resolves.toMatchObject({ keyId: id, brandId, scopes: ['mint:read', 'products:read'] });

    expect(await mintctl('apikey', 'revoke', '--brand', brandId, '--id', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    await expect(verifyApiKey(app.ctx, key)).rejects.toThrow('unknown API key');
    expect(JSON.parse((await mintctl('apikey', 'list', '--brand', brandId)).stdout.trim()).revokedAt).not.toBeNull();
  });

  it('refuses unknown scopes, a malformed brand and a key of another workspace with a message and a non-zero exit', async () => {
    const badScope = await mintctl('apikey', 'create', '--brand', brandId, '--scopes', 'workspace:admin');
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toContain('scopes: must be one or more of mint:write, mint:read, products:write, products:read');
    const badBrand = await mintctl('apikey', 'list', '--brand', 'acme');
    expect(badBrand.code).toBe(2);
    expect(badBrand.stderr).toContain('--brand must be a uuid');
    const otherBrand = (await createWorkspace(app.ctx, { name: 'Other' })).id;
    const { id } = JSON.parse((await mintctl('apikey', 'create', '--brand', brandId)).stdout) as { id: string };
    const foreign = await mintctl('apikey', 'revoke', '--brand', otherBrand, '--id', id);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`api key ${id} not found`);
  });
});
