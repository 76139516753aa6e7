// SIGTERM during a burst of requests: the API process (`node services/api/src/main.ts`) stops
// accepting, finishes every call it accepted, and exits by itself. A client never loses a call the
// server took: every response it gets is complete and successful, and every job the server wrote
// belongs to a response the client received.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { ActivationMode, IdentityMode, MintService } from '@mint/contract';
import { query } from '../../../test/support/sql.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { testInfra } from '../../../test/support/context.ts';
import { freshStreamNames } from '../../../test/support/nats.ts';
import { freePort } from '../../../test/support/ports.ts';
import { testJwtSecret, useUseCases } from '../../../test/support/usecases.ts';
import { submitOverJson } from './support.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const { app, brand } = useUseCases();
let child: ChildProcess | undefined;

afterAll(() => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** What one client call ended with. */
type Result =
  | { readonly kind: 'ok'; readonly key: string; readonly jobId: string; readonly afterSignal: boolean }
  | { readonly kind: 'bad-response'; readonly key: string; readonly detail: string }
  | { readonly kind: 'refused'; readonly key: string; readonly detail: string };

/** Connection-level failures: the server never took the call (refused, or an idle connection closed under it). */
const refusal =
  /ECONNREFUSED|ECONNRESET|other side closed|socket hang up|UND_ERR_SOCKET|GOAWAY|REFUSED_STREAM|NGHTTP2_REFUSED_STREAM|session closed|stream was destroyed/i;

describe('SIGTERM on the API process', () => {
  it('drains a burst of HTTP/1.1 and HTTP/2 calls: nothing accepted is lost, and the process exits 0', async () => {
    const port = await freePort();
    const names = freshStreamNames();
    const output: string[] = [];
    child = spawn(process.execPath, ['services/api/src/main.ts'], {
      cwd: repoRoot,
      env: {
        PATH: process.env['PATH'] ?? '',
        DATABASE_URL: app.database.url,
        NATS_URL: testInfra().natsUrl,
        NATS_STREAM: names.stream,
        NATS_SUBJECT_PREFIX: names.subjectPrefix,
        AUTH_JWT_SECRET: testJwtSecret,
        PORT: String(port),
        HOST: '127.0.0.1',
        SHUTDOWN_TIMEOUT_MS: '15000',
        LOG_LEVEL: 'info',
        DOWNLOAD_SIGNING_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
        WEBHOOK_SECRET_KEYS: `w1:${Buffer.alloc(32, 8).toString('base64')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const exited = once(child, 'exit').then(([code, signal]) => (code as number | null) ?? (signal as string));
    const base = `http://127.0.0.1:${port}`;
    for (let ready = false; !ready; ) {
      if (child.exitCode !== null) throw new Error(`api exited early:\n${output.join('')}`);
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!ready) await sleep(50);
    }

    let signalled = false;
    let accepted = 0;
    const results: Result[] = [];
    const request = (key: string) => ({
      brandId: brand.brandId,
      productId: brand.productId,
      requestedQuantity: 5,
      identityMode: IdentityMode.SERIAL,
      activationMode: ActivationMode.ACTIVE_AT_MINT,
      idempotencyKey: key,
    });
    const record = (result: Result) => {
      results.push(result);
      if (result.kind === 'ok' && ++accepted === 40) {
        signalled = true;
        child!.kill('SIGTERM');
      }
      return result.kind === 'ok';
    };

    // Connect JSON over HTTP/1.1 keep-alive connections (fetch), one call after another per loop.
    const http1 = async () => {
      for (;;) {
        const key = randomUUID();
        const sentAfterSignal = signalled;
        let res: Response;
        try {
          res = await submitOverJson({ baseUrl: base }, brand, {
            requested_quantity: 5,
            identity_mode: 'IDENTITY_MODE_SERIAL',
            activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
            idempotency_key: key,
          });
        } catch (error) {
          record({ kind: 'refused', key, detail: explain(error) });
          return;
        }
        let body: { ok?: boolean; mint_job_id?: string } | undefined;
        let detail = `status ${res.status}`;
        try {
          body = (await res.json()) as typeof body;
        } catch (error) {
          detail += `, body cut: ${explain(error)}`;
        }
        const ok = res.status === 200 && body?.ok === true && typeof body.mint_job_id === 'string';
        if (
          !record(
            ok
              ? { kind: 'ok', key, jobId: body!.mint_job_id!, afterSignal: signalled && !sentAfterSignal }
              : { kind: 'bad-response', key, detail: `${detail} ${JSON.stringify(body)}` },
          )
        )
          return;
      }
    };
    // The Connect protocol over one HTTP/2 connection shared by several loops.
    const mint = createClient(MintService, createConnectTransport({ baseUrl: base, httpVersion: '2' }));
    const http2 = async () => {
      for (;;) {
        const key = randomUUID();
        const sentAfterSignal = signalled;
        try {
          const res = await mint.submitMintRequest(request(key), { headers: { authorization: `Bearer ${brand.token}` } });
          if (
            !record(
              res.ok && res.mintJobId
                ? { kind: 'ok', key, jobId: res.mintJobId, afterSignal: signalled && !sentAfterSignal }
                : { kind: 'bad-response', key, detail: JSON.stringify(res) },
            )
          )
            return;
        } catch (error) {
          const detail = explain(error);
          record(refusal.test(detail) ? { kind: 'refused', key, detail } : { kind: 'bad-response', key, detail });
          return;
        }
      }
    };
    await Promise.all([...Array.from({ length: 12 }, http1), ...Array.from({ length: 4 }, http2)]);
    expect(await exited, output.join('')).toBe(0);

    const bad = results.filter((r) => r.kind === 'bad-response');
    expect(bad, 'every response received is complete and successful').toEqual([]);
    for (const r of results) if (r.kind === 'refused') expect(r.detail).toMatch(refusal);
    const ok = results.filter((r) => r.kind === 'ok');
    expect(ok.length).toBeGreaterThanOrEqual(40);
    // Calls in flight when the signal arrived were finished, not cut.
    expect(ok.filter((r) => r.afterSignal).length).toBeGreaterThan(0);
    // Every job the server wrote was answered: nothing was accepted and then lost.
    const rows = await query<{ idempotency_key: string; id: string }>(app.db.em.fork(), 'select idempotency_key, id from mint_jobs where brand_id = ?', [
      brand.brandId,
    ]);
    expect(new Map(rows.map((r) => [r.idempotency_key, r.id]))).toEqual(new Map(ok.map((r) => [r.key, r.jobId])));
    const log = output.join('');
    expect(log).toContain('api shutting down');
    expect(log).toContain('api stopped');
  }, 60_000);
});

/** An error's message with its causes, for matching refusals. */
function explain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof ConnectError) parts.push(`[${e.code}] ${e.rawMessage}`);
    else if (e instanceof Error) parts.push(`${e.name}: ${e.message}${(e as { code?: string }).code ? ` (${(e as { code?: string }).code})` : ''}`);
    else parts.push(String(e));
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join(' <- ');
}
