// `npm start`'s dev mode as a child process, as a new user gets it: the embedded PostgreSQL and the
// in-process bus in a data folder of its own, on a free port. Used by the dev-mode test and
// `npm run bench:dev`.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MintService } from '@mint/contract';
import { freePort } from './ports.ts';

const repoRoot = join(import.meta.dirname, '../..');

/** The demo workspace a dev server seeded (DATA_DIR/demo.json) with the banner's session token. */
export interface DevSeed {
  readonly brand_id: string;
  readonly brand_slug: string;
  readonly product_id: string;
  readonly gtin: string;
  readonly user_id: string;
  readonly access_token: string;
}

/** A running dev server. */
export interface DevMode {
  readonly baseUrl: string;
  readonly seed: DevSeed;
  /** Milliseconds from spawning to the banner's token. */
  readonly startMs: number;
  /** A MintService client over Connect JSON (HTTP/1.1) and the session token's headers. */
  readonly mint: Client<typeof MintService>;
  readonly auth: { readonly headers: { readonly authorization: string } };
  /** Everything the process wrote so far. */
  output(): string;
  /** Sends SIGINT and waits for the exit; resolves to the exit code (or signal) and the milliseconds it took. */
  stop(): Promise<{ code: number | string; ms: number }>;
  readonly child: ChildProcess;
}

/** Starts dev mode on `dataDir`; rejects with its output when no banner came within `timeoutMs`. */
export async function startDevMode(dataDir: string, options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<DevMode> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...options.env };
  for (const name of ['DATABASE_URL', 'NATS_URL', 'PUBLIC_BASE_URL', 'PACK_STORE_DIR']) delete env[name];
  const started = performance.now();
  const child = spawn(process.execPath, [join(repoRoot, 'services/cli/src/main.ts'), 'dev'], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? 'unknown')));
  const token = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(new Error(`no banner within ${options.timeoutMs ?? 90_000} ms:\n${output}`));
    }, options.timeoutMs ?? 90_000);
    const look = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const found = /export TOKEN=(\S+)/.exec(output);
      if (found !== null) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`dev mode exited with ${code}:\n${output}`));
    });
  });
  const startMs = performance.now() - started;
  const stored = JSON.parse(await readFile(join(dataDir, 'demo.json'), 'utf8')) as Omit<DevSeed, 'access_token'>;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    startMs,
    child,
    seed: { ...stored, access_token: token },
    mint: createClient(MintService, createConnectTransport({ baseUrl, httpVersion: '1.1' })),
    auth: { headers: { authorization: `Bearer ${token}` } },
    output: () => output,
    async stop() {
      const at = performance.now();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      const code = await exited;
      return { code, ms: performance.now() - at };
    },
  };
}
