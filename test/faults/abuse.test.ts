// Abuse against a real API process (seconds, not minutes): gzip bombs from anonymous callers are
// answered from the headers, within a small memory bound; slow senders (bodies that stall, over
// HTTP/1.1 and HTTP/2) are cut after HTTP_BODY_TIMEOUT_MS while the API keeps answering; a flood of
// WatchMintJob streams from one caller is capped at WATCH_MAX_STREAMS_PER_CALLER.

import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MintService } from '@mint/contract';
import { submitMintRequest } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '../support/context.ts';
import { freshStreamNames } from '../support/nats.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';
import { killAllApis, spawnApi, type ApiProcess } from './support.ts';

let app: UseCaseBundle;
let api: ApiProcess;
const submitPath = '/mint.v1.MintService/SubmitMintRequest';
const bodyTimeoutMs = 500;
const watchCap = 5;

/** Peak resident memory of a process so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

beforeAll(async () => {
  app = await setupUseCases();
  api = await spawnApi({
    databaseUrl: app.database.url,
    natsUrl: testInfra().natsUrl,
    ...freshStreamNames(),
    env: { HTTP_BODY_TIMEOUT_MS: String(bodyTimeoutMs), WATCH_MAX_STREAMS_PER_CALLER: String(watchCap) },
  });
});
afterAll(async () => {
  await killAllApis();
  await app?.close();
});

describe('abuse against the API process', () => {
  it('answers 20 anonymous gzip bombs (40 KB inflating to 39 MiB each) unauthenticated, and its peak memory barely moves', async () => {
    const bomb = gzipSync(Buffer.concat([Buffer.from('{'), Buffer.alloc(39 * 1024 * 1024, 0x20), Buffer.from('}')]), { level: 9 });
    const before = peakRss(api.child.pid!);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${api.baseUrl}${submitPath}`, {
          method: 'POST',
          body: bomb,
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        }).then(async (res) => [res.status, ((await res.json()) as { code: string }).code]),
      ),
    );
    expect(new Set(answers.map((a) => a.join(' ')))).toEqual(new Set(['401 unauthenticated']));
    // Inflating even one of them would hold 39 MiB (and parse it).
    expect(peakRss(api.child.pid!) - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('cuts 20 stalled HTTP/1.1 bodies and 5 HTTP/2 sessions of 20 stalled streams after the body timeout, and keeps answering', async () => {
    const brand = await app.seedBrand();
    const started = Date.now();
    // HTTP/1.1: headers with a 60 KB Content-Length, a few body bytes, then nothing.
    const h1 = Array.from(
      { length: 20 },
      () =>
        new Promise<number>((resolve) => {
          const socket = net.connect(api.port, '127.0.0.1', () => {
            socket.write(
              `POST ${submitPath} HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nAuthorization: Bearer ${brand.token}\r\nContent-Length: 61440\r\n\r\n{"brand_id":`,
            );
          });
          socket.on('error', () => undefined);
          socket.on('data', () => undefined);
          socket.on('close', () => resolve(Date.now() - started));
        }),
    );
    // HTTP/2: sessions of streams with unfinished bodies.
    const h2 = Array.from(
      { length: 5 },
      () =>
        new Promise<number>((resolve) => {
          const session = http2.connect(api.baseUrl);
          session.on('error', () => undefined);
          session.on('close', () => resolve(Date.now() - started));
          for (let i = 0; i < 20; i++) {
            const stream = session.request({
              ':method': 'POST',
              ':path': submitPath,
              'content-type': 'application/json',
              authorization: `Bearer ${brand.token}`,
            });
            stream.on('error', () => undefined);
            stream.write('{"brand_id":');
          }
        }),
    );
    const cut = await Promise.race([Promise.all([...h1, ...h2]), new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
    expect(cut).not.toBeNull();
    for (const elapsed of cut!) {
      expect(elapsed).toBeGreaterThanOrEqual(bodyTimeoutMs - 100);
      expect(elapsed).toBeLessThan(3 * bodyTimeoutMs + 2_000);
    }
    expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
  });

  it(`holds ${watchCap} WatchMintJob streams of one caller open and refuses 40 more resource_exhausted, then takes new ones as they close`, async () => {
    const brand = await app.seedBrand();
    // No executor runs here: the job stays QUEUED, so every admitted watch stays open.
    const job = await submitMintRequest(
      app.ctx,
      { id: brand.userId },
      {
        brandId: brand.brandId,
        productId: brand.productId,
        productBatchId: null,
        requestedQuantity: 10,
        identityMode: 'serial',
        activationMode: 'active_at_mint',
        lots: [],
        idempotencyKey: null,
      },
    );
    if (!job.ok) throw new Error('submit blocked');
    const mint = createClient(MintService, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '2' }));
    const abort = new AbortController();
    const watch = async (): Promise<string> => {
      const updates = mint.watchMintJob(
        { brandId: brand.brandId, mintJobId: job.mintJobId },
        { headers: { authorization: `Bearer ${brand.token}` }, signal: abort.signal },
      );
      try {
        const first = await updates[Symbol.asyncIterator]().next();
        return first.done === true ? 'ended' : 'open';
      } catch (error) {
        return ConnectError.from(error).code === Code.ResourceExhausted ? 'refused' : String(error);
      }
    };
    const outcomes = await Promise.all(Array.from({ length: watchCap + 40 }, watch));
    expect(outcomes.filter((o) => o === 'open')).toHaveLength(watchCap);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(40);
    expect((await fetch(`${api.baseUrl}/healthz`)).status).toBe(200);
    abort.abort();
    // The closed streams free their slots.
    const again = new AbortController();
    const reopened = await new Promise<string>((resolve) => {
      const retry = async () => {
        const updates = mint.watchMintJob(
          { brandId: brand.brandId, mintJobId: job.mintJobId },
          { headers: { authorization: `Bearer ${brand.token}` }, signal: again.signal },
        );
        try {
          await updates[Symbol.asyncIterator]().next();
          resolve('open');
        } catch (error) {
          if (ConnectError.from(error).code === Code.ResourceExhausted) setTimeout(() => void retry(), 100);
          else resolve(String(error));
        }
      };
      void retry();
    });
    again.abort();
    expect(reopened).toBe('open');
  });
});
