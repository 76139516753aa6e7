// `npm start`'s dev mode as a new user runs it, in a data folder of its own: on its embedded
// PostgreSQL the API stays live while the executor mints (WatchMintJob shows progress before
// COMPLETED), `/` leads to the console, `mintctl signin` and Enter on its terminal give a fresh token
// that the running server accepts, SIGINT stops it (database server included) with exit 0, and a second start reuses the
// data folder and its demo workspace.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ActivationMode, IdentityMode, MintJobStatus } from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevMode, type DevMode } from './support/dev-mode.ts';

const repoRoot = join(import.meta.dirname, '..');
let dataDir: string;
let dev: DevMode | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'dev-mode-'));
  // One writer per job and chunks of 1,000: the mint below lasts seconds even on a fast, quiet host,
  // while the stream sends at most one count a second.
  dev = await startDevMode(dataDir, { env: { EXECUTOR_JOB_WRITERS: '1', MINT_CHUNK_SIZE: '1000' } });
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe('dev mode on the embedded PostgreSQL', () => {
  it('streams WatchMintJob progress while a mint runs, before COMPLETED', async () => {
    const { mint, seed, auth } = dev!;
    const requested = 150_000;
    const { mintJobId } = await mint.submitMintRequest(
      {
        brandId: seed.brand_id,
        productId: seed.product_id,
        requestedQuantity: requested,
        identityMode: IdentityMode.SERIAL,
        activationMode: ActivationMode.ACTIVE_AT_MINT,
      },
      auth,
    );
    const frames: { status: MintJobStatus; minted: number; ms: number }[] = [];
    const opened = performance.now();
    for await (const update of mint.watchMintJob({ brandId: seed.brand_id, mintJobId: mintJobId! }, auth)) {
      frames.push({ status: update.status, minted: update.mintedQuantity, ms: Math.round(performance.now() - opened) });
    }
    expect(frames.at(-1)).toMatchObject({ status: MintJobStatus.COMPLETED, minted: requested });
    const progress = frames.filter((f) => f.status !== MintJobStatus.COMPLETED && f.minted > 0 && f.minted < requested);
    expect(progress.length, JSON.stringify(frames)).toBeGreaterThan(0);
  }, 90_000);

  it('redirects / to the console', async () => {
    const res = await fetch(`${dev!.baseUrl}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console/');
  });

  it('gives a fresh sign-in link and token through mintctl signin, which the running server accepts', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'services/cli/src/main.ts'), 'signin'], {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', NATS_URL: '' },
    });
    const token = /export TOKEN=(\S+)/.exec(stdout)?.[1];
    const port = new URL(dev!.baseUrl).port;
    expect(stdout).toContain(`http://localhost:${port}/console/#token=${token}`);
    expect(token).toBeDefined();
    expect(token).not.toBe(dev!.seed.access_token);
    const kpis = await dev!.mint.getMintKpis({ brandId: dev!.seed.brand_id }, { headers: { authorization: `Bearer ${token}` } });
    expect(kpis.ok).toBe(true);
  }, 60_000);

  it('prints a fresh sign-in link and token when Enter is pressed on its terminal', async () => {
    const before = dev!.output().match(/export TOKEN=\S+/g)?.length ?? 0;
    dev!.child.stdin!.write('\n');
    await expect.poll(() => dev!.output().match(/export TOKEN=\S+/g)?.length ?? 0, { timeout: 10_000 }).toBe(before + 1);
    const token = [...dev!.output().matchAll(/export TOKEN=(\S+)/g)].at(-1)![1]!;
    const kpis = await dev!.mint.getMintKpis({ brandId: dev!.seed.brand_id }, { headers: { authorization: `Bearer ${token}` } });
    expect(kpis.ok).toBe(true);
  });

  it('stops on SIGINT with its database server, and a second start reuses the data folder', async () => {
    const pid = Number((await readFile(join(dataDir, 'postgres/postmaster.pid'), 'utf8')).split('\n')[0]);
    const brand = dev!.seed.brand_id;
    expect((await dev!.stop()).code).toBe(0);
    dev = undefined;
    expect(() => process.kill(pid, 0)).toThrow();
    expect(existsSync(join(dataDir, 'dev-server.json'))).toBe(false);
    dev = await startDevMode(dataDir);
    expect(dev.output()).toContain('Using the demo workspace');
    expect(dev.seed.brand_id).toBe(brand);
    const batches = await dev.mint.listMintBatches({ brandId: brand }, dev.auth);
    expect(batches.batches.length).toBeGreaterThan(0);
  }, 120_000);
});
