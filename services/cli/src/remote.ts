// mintctl's commands that talk to a running API through @mint/client, as any client would:
// `login` keeps an API address, a session token and a brand; `mint` submits and (with --watch)
// draws the job's progress; `listen` forwards webhook deliveries to a local URL, like
// `stripe listen --forward-to`. None of them opens the database.

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ActivationMode, DecommissionReason, IdentityMode, MintJobStatus, SerialAction, SerialState, createMintClient, type MintClient } from '@mint/client';
import { UsageError, type Print } from './admin.ts';

/** What `mintctl login` keeps: where the API is, the session token, and the brand to act on. */
export interface StoredLogin {
  readonly api: string;
  readonly token: string;
  readonly brand?: string;
}

/** Options every API command reads; each falls back to the environment, then to the stored login. */
export interface RemoteOptions {
  readonly api?: string;
  readonly token?: string;
  readonly brand?: string;
}

/** The login file: `MINTCTL_CONFIG`, else `$XDG_CONFIG_HOME/mintctl/login.json`, else `~/.config/mintctl/login.json`. */
export function loginFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.MINTCTL_CONFIG ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'mintctl', 'login.json');
}

function readLogin(env: NodeJS.ProcessEnv): StoredLogin | undefined {
  try {
    return JSON.parse(readFileSync(loginFile(env), 'utf8')) as StoredLogin;
  } catch {
    return undefined;
  }
}

/** The API address, token and brand to use: flags, then MINT_API_URL / MINT_TOKEN / MINT_BRAND, then the stored login. */
export function resolveRemote(options: RemoteOptions, env: NodeJS.ProcessEnv = process.env): { api: string; token: string; brand: string | undefined } {
  const stored = readLogin(env);
  const api = options.api ?? env.MINT_API_URL ?? stored?.api ?? 'http://localhost:8080';
  const token = options.token ?? env.MINT_TOKEN ?? stored?.token;
  if (!token) throw new UsageError('no session token: run `mintctl login --token <token>` first, or pass --token (or MINT_TOKEN)');
  try {
    new URL(api);
  } catch {
    throw new UsageError(`--api must be a URL such as http://localhost:8080, not "${api}"`);
  }
  return { api: api.replace(/\/+$/, ''), token, brand: options.brand ?? env.MINT_BRAND ?? stored?.brand };
}

function needBrand(brand: string | undefined): string {
  if (!brand) throw new UsageError('--brand is required (or log in with one: `mintctl login --brand <id>`)');
  return brand;
}

/**
 * `mintctl login [--api URL] --token T [--brand ID]`: checks the token against the API (the
 * user's memberships), picks the brand (the only one, or --brand), and keeps all three in the login
 * file, readable by its owner only. The token is never printed.
 */
export async function loginCommand(options: RemoteOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const api = (options.api ?? env.MINT_API_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const token = options.token ?? env.MINT_TOKEN;
  if (!token) throw new UsageError('login needs --token (a session token: `mintctl token issue --user <id>`, or the one `npm start` prints)');
  const { memberships } = await createMintClient({ baseUrl: api, token }).account.listMyMemberships({});
  const brand = options.brand ?? (memberships.length === 1 ? memberships[0]!.brandId : undefined);
  const membership = memberships.find((m) => m.brandId === brand);
  if (!membership) {
    const list = memberships.map((m) => `  ${m.brandId}  ${m.brandName} (${m.role})`).join('\n');
    throw new UsageError(
      brand === undefined
        ? `the token's user belongs to ${memberships.length} brands; pick one with --brand:\n${list}`
        : `the token's user is not a member of brand ${brand}; its brands:\n${list}`,
    );
  }
  const file = loginFile(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify({ api, token, brand } satisfies StoredLogin, null, 2)}\n`, { mode: 0o600 });
  print(`logged in to ${api}: brand ${membership.brandName} (${brand}) as ${membership.role}; kept in ${file}`);
}

/** A progress bar of `width` cells for `done` of `total`, with the counts: `[#####.....]  50%  5,000/10,000`. */
export function progressBar(done: number, total: number, width = 30): string {
  const share = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
}

/** Options of `mintctl mint`. */
export interface MintOptions extends RemoteOptions {
  readonly product?: string;
  readonly quantity?: string;
  readonly mode?: string;
  readonly activation?: string;
  readonly productBatch?: string;
  readonly watch: boolean;
}

const statusName = (status: MintJobStatus) => MintJobStatus[status]?.replace(/^MINT_JOB_STATUS_/, '') ?? String(status);

/**
 * `mintctl mint --product ID --quantity N [--mode serial|batch] [--activation active_at_mint|first_scan]
 * [--product-batch ID] [--watch]`: submits (with a fresh idempotency key), prints the job, and with
 * --watch follows it over WatchMintJob with a progress bar until it settles, then, for a completed
 * serial job, prints its first unit's resolver URL and the curl line that scans it. Exits 1 when the
 * request is blocked or the job fails.
 */
export async function mintCommand(
  options: MintOptions,
  print: Print,
  progress: NodeJS.WriteStream | undefined = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const remote = resolveRemote(options, env);
  const brandId = needBrand(remote.brand);
  if (!options.product) throw new UsageError('mint needs --product <id>');
  const quantity = Number(options.quantity);
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > 1_000_000)
    throw new UsageError(`--quantity must be a whole number from 1 to 1000000, not "${options.quantity ?? ''}"`);
  const modes: Record<string, IdentityMode> = { serial: IdentityMode.SERIAL, batch: IdentityMode.BATCH };
  const activations: Record<string, ActivationMode> = { active_at_mint: ActivationMode.ACTIVE_AT_MINT, first_scan: ActivationMode.FIRST_SCAN };
  const identityMode = modes[options.mode ?? 'serial'];
  if (identityMode === undefined) throw new UsageError(`--mode must be serial or batch, not "${options.mode}"`);
  const activationMode = activations[options.activation ?? 'active_at_mint'];
  if (activationMode === undefined) throw new UsageError(`--activation must be active_at_mint or first_scan, not "${options.activation}"`);
  const client = createMintClient({ baseUrl: remote.api, token: remote.token });
  const submitted = await client.mint.submitMintRequest({
    brandId,
    productId: options.product,
    requestedQuantity: quantity,
    identityMode,
    activationMode,
    productBatchId: options.productBatch,
    idempotencyKey: randomUUID(),
  });
  if (!submitted.ok) {
    for (const reason of submitted.blockingReasons) print(`blocked: ${reason.code}: ${reason.message}`);
    process.exitCode = 1;
    return;
  }
  print(`job ${submitted.mintJobId} (batch ${submitted.mintBatchId}): ${statusName(submitted.status)}`);
  if (!options.watch) return;
  const status = await watchJob(client, brandId, submitted.mintJobId!, print, progress);
  // What to do next with a minted serial batch: scan one of its units at the public resolver.
  if (status === MintJobStatus.COMPLETED && identityMode === IdentityMode.SERIAL) {
    const { units } = await client.mint.listMintUnits({ brandId, mintBatchId: submitted.mintBatchId, limit: 1 });
    const unit = units[0];
    if (unit !== undefined) {
      print(`first unit: ${unit.serial}  ${unit.resolverUrl}`);
      print(`scan it: curl -H 'Accept: application/json' ${unit.resolverUrl}`);
    }
  }
}

/** Options of `mintctl serials`. */
export interface SerialsOptions extends RemoteOptions {
  readonly action?: string;
  readonly serials?: string;
  readonly batch?: string;
  readonly from?: string;
  readonly to?: string;
  readonly reason?: string;
  readonly key?: string;
  /** A container's SSCC: every unit inside it. */
  readonly container?: string;
}

const wireName = (name: string) => name.toUpperCase();

/**
 * `mintctl serials <encode|commission|scrap|decommission|reactivate|return> (--serials A,B | --batch ID
 * [--from N] [--to N] | --container SSCC) [--reason R] [--key K]`: moves serials over MoveSerials (a fresh idempotency key
 * unless --key repeats one), follows a running move with GetSerialMove until done, and prints the
 * counts and every refused unit with its state. Exits 1 when a unit was refused.
 */
export async function serialsCommand(options: SerialsOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const remote = resolveRemote(options, env);
  const brandId = needBrand(remote.brand);
  const action = SerialAction[wireName(options.action ?? '') as keyof typeof SerialAction];
  if (typeof action !== 'number' || action === SerialAction.UNSPECIFIED) {
    throw new UsageError(`serials needs an action: encode, commission, scrap, decommission, reactivate or return, not "${options.action ?? ''}"`);
  }
  const reason =
    options.reason === undefined ? DecommissionReason.UNSPECIFIED : DecommissionReason[wireName(options.reason) as keyof typeof DecommissionReason];
  if (typeof reason !== 'number')
    throw new UsageError(`--reason must be recalled, destroyed, stolen, expired, damaged, sample or consumed, not "${options.reason}"`);
  if ([options.serials, options.batch, options.container].filter((x) => x !== undefined).length !== 1) {
    throw new UsageError('serials needs exactly one of --serials A,B, --batch <id> or --container <sscc>');
  }
  const seq = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a whole number from 1, not "${v}"`);
    return n;
  };
  const target =
    options.serials !== undefined
      ? {
          case: 'serials' as const,
          value: {
            serials: options.serials
              .split(',')
              .map((x) => x.trim())
              .filter((x) => x !== ''),
          },
        }
      : options.container !== undefined
        ? { case: 'container' as const, value: options.container }
        : { case: 'range' as const, value: { mintBatchId: options.batch!, fromSeq: seq(options.from, 'from'), toSeq: seq(options.to, 'to') } };
  const client = createMintClient({ baseUrl: remote.api, token: remote.token });
  let { move } = await client.mint.moveSerials({ brandId, action, reason, target, idempotencyKey: options.key ?? randomUUID() });
  while (move !== undefined && move.status === 'running') {
    print(
      `move ${move.moveId}: ${move.moved.toLocaleString('en-US')} moved, ${move.refused.toLocaleString('en-US')} refused of ${move.total.toLocaleString('en-US')}`,
    );
    await new Promise((r) => setTimeout(r, 1000));
    ({ move } = await client.mint.getSerialMove({ brandId, moveId: move.moveId }));
  }
  if (move === undefined) throw new Error('MoveSerials answered no move');
  print(
    `move ${move.moveId} ${move.replayed ? '(replayed) ' : ''}done: ${move.moved.toLocaleString('en-US')} moved, ${move.refused.toLocaleString('en-US')} refused of ${move.total.toLocaleString('en-US')}`,
  );
  for (const r of move.refusals) {
    const state =
      r.state === SerialState.UNSPECIFIED
        ? ''
        : ` (${SerialState[r.state]!.toLowerCase()}${r.reason === DecommissionReason.UNSPECIFIED ? '' : `: ${DecommissionReason[r.reason]!.toLowerCase()}`})`;
    print(`refused ${r.serial ?? `${r.mintBatchId} #${r.seq}`}: ${r.refusal}${state}`);
  }
  if (move.refused > 0) process.exitCode = 1;
}

/** Follows a job with a progress bar until it settles; returns its last status. */
async function watchJob(client: MintClient, brandId: string, jobId: string, print: Print, progress: NodeJS.WriteStream | undefined): Promise<MintJobStatus> {
  const tty = progress?.isTTY === true;
  let last = '';
  for (;;) {
    let final: { status: MintJobStatus; done: boolean; failureReason?: string; minted: number; requested: number } | undefined;
    for await (const update of client.mint.watchMintJob({ brandId, mintJobId: jobId })) {
      const line = `${progressBar(update.mintedQuantity, update.requestedQuantity)}  ${statusName(update.status)}`;
      if (tty) progress!.write(`\r${line}`);
      else if (line !== last) progress?.write(`${line}\n`);
      last = line;
      final = {
        status: update.status,
        done: update.done,
        failureReason: update.failureReason,
        minted: update.mintedQuantity,
        requested: update.requestedQuantity,
      };
    }
    if (tty) progress!.write('\n');
    // A watch ends cleanly after WATCH_MAX_DURATION_MS while the job still runs: watch again.
    if (final === undefined || (!final.done && final.status !== MintJobStatus.PREFLIGHTED)) continue;
    if (final.status === MintJobStatus.FAILED) {
      print(`job ${jobId} FAILED: ${final.failureReason ?? 'no reason given'}`);
      process.exitCode = 1;
    } else {
      print(`job ${jobId} ${statusName(final.status)}: ${final.minted.toLocaleString('en-US')} of ${final.requested.toLocaleString('en-US')} minted`);
    }
    return final.status;
  }
}

/** Options of `mintctl listen`. */
export interface ListenOptions extends RemoteOptions {
  readonly forwardTo?: string;
  readonly events?: string;
  readonly port?: string;
}

/** A running `mintctl listen`: the endpoint it registered, its signing secret, and how to stop it. */
export interface Listener {
  readonly endpointId: string;
  readonly secret: string;
  readonly url: string;
  /** Deletes the endpoint and stops receiving. */
  stop(): Promise<void>;
}

const forwardedHeaders = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `mintctl listen --forward-to URL [--events a,b] [--port N]`: receives on a loopback port,
 * registers a temporary webhook endpoint for it on the API (the API must accept loopback endpoints:
 * `WEBHOOK_ALLOW_LOOPBACK=true`, as in dev mode for tests), prints the endpoint's signing secret,
 * and forwards every delivery (body and `webhook-*` headers untouched, so signatures verify with
 * that secret) to the local URL, answering the API with the local answer's status (a failure is
 * retried as the API's schedule says). Stopping deletes the endpoint.
 */
export async function startListener(options: ListenOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<Listener> {
  const remote = resolveRemote(options, env);
  const brandId = needBrand(remote.brand);
  if (!options.forwardTo) throw new UsageError('listen needs --forward-to <url> (e.g. http://localhost:3000/webhooks)');
  let target: URL;
  try {
    target = new URL(options.forwardTo);
  } catch {
    throw new UsageError(`--forward-to must be a URL, not "${options.forwardTo}"`);
  }
  const port = options.port === undefined ? 0 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port must be a port number, not "${options.port}"`);
  const eventTypes = options.events
    ? options.events
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean)
    : [];

  const server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const headers: Record<string, string> = {};
      for (const name of forwardedHeaders) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      let type = '?';
      try {
        type = String((JSON.parse(body.toString('utf8')) as { type?: unknown }).type ?? '?');
      } catch {}
      try {
        const answer = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(9_000) });
        print(`${new Date().toISOString()}  ${type}  ${headers['webhook-id'] ?? ''}  -> ${answer.status}`);
        res.writeHead(answer.status).end();
      } catch (error) {
        print(
          `${new Date().toISOString()}  ${type}  ${headers['webhook-id'] ?? ''}  -> not forwarded: ${error instanceof Error ? error.message : String(error)}`,
        );
        res.writeHead(502).end();
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/`;
  const client = createMintClient({ baseUrl: remote.api, token: remote.token });
  let created;
  try {
    created = await client.webhooks.createWebhookEndpoint({ brandId, url, eventTypes, description: `mintctl listen -> ${target.href}` });
  } catch (error) {
    server.close();
    if (error instanceof Error && /\burl: must be an https/.test(error.message)) {
      throw new Error(
        `${error.message}: this API refuses loopback endpoints; start it with WEBHOOK_ALLOW_LOOPBACK=true (dev mode: \`WEBHOOK_ALLOW_LOOPBACK=true npm start\`)`,
        { cause: error },
      );
    }
    throw error;
  }
  const endpointId = created.endpoint!.id;
  print(`Forwarding ${eventTypes.length ? eventTypes.join(', ') : 'every event'} of brand ${brandId} to ${target.href}`);
  print(`Webhook signing secret (verify the forwarded deliveries with it): ${created.secret}`);
  print('Ctrl-C stops and removes the temporary endpoint.');
  return {
    endpointId,
    secret: created.secret,
    url,
    async stop() {
      await client.webhooks.deleteWebhookEndpoint({ brandId, endpointId }).catch((error: unknown) => {
        print(`could not delete endpoint ${endpointId}: ${error instanceof Error ? error.message : String(error)}`);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/** Runs `mintctl listen` until SIGINT or SIGTERM, then removes the endpoint. */
export async function listenCommand(options: ListenOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const listener = await startListener(options, print, env);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await listener.stop();
  print(`removed endpoint ${listener.endpointId}`);
}
