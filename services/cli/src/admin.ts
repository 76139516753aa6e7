import { apiKeyScopes, isUuid, type ApiKeyScope } from '@mint/domain';
import { distributeForCitus, migrate, type Database } from '@mint/db';
import {
  createApiKey,
  createEdgeLogShipper,
  createScanAlerts,
  issueAccessToken,
  listApiKeys,
  revokeApiKey,
  seedDemo,
  setApiAccess,
  type UseCaseContext,
} from '@mint/usecases';
import { createInterface } from 'node:readline';

/** Writes one line (or a JSON document) to standard output. */
export type Print = (line: string) => void;

/**
 * `mintctl migrate`: applies pending migrations, then, when the `citus` extension is present, lays
 * the tables out on Citus (tenant tables distributed by brand_id, co-located; the reference tables).
 */
export async function migrateCommand(db: Database, print: Print): Promise<void> {
  await migrate(db);
  print('migrations applied');
  const layout = await distributeForCitus(db);
  if (!layout.citus) return;
  print(`citus: ${layout.distributed.length} table(s) distributed by brand_id, ${layout.reference.length} reference table(s) created`);
}

/** `mintctl seed-demo [--json]`: creates an independent demo workspace and prints how to use it. */
export async function seedDemoCommand(ctx: UseCaseContext, json: boolean, print: Print): Promise<void> {
  const seed = await seedDemo(ctx);
  if (json) print(JSON.stringify(seed));
  else for (const [key, value] of Object.entries(seed)) print(`${key}: ${value}`);
}

/** `mintctl token issue --user <id> [--ttl <seconds>]`: a development session token. */
export async function tokenIssueCommand(ctx: UseCaseContext, userId: string, ttlSeconds: number, print: Print): Promise<void> {
  print(await issueAccessToken(ctx, userId, ttlSeconds));
}

/** `mintctl apikey create|list|revoke`. */
export async function apiKeyCommand(
  ctx: UseCaseContext,
  action: string,
  options: { brand: string; name?: string; scopes?: string; id?: string },
  print: Print,
): Promise<void> {
  requireUuid('--brand', options.brand);
  switch (action) {
    case 'create': {
      const scopes = (options.scopes ?? apiKeyScopes.join(',')).split(',').map((s) => s.trim()) as ApiKeyScope[];
      const key = await createApiKey(ctx, { brandId: options.brand, name: options.name ?? 'cli', scopes });
      print(JSON.stringify({ id: key.id, api_key: key.key, scopes }));
      return;
    }
    case 'list':
      for (const key of await listApiKeys(ctx, options.brand)) print(JSON.stringify(key));
      return;
    case 'revoke':
      if (!options.id) throw new UsageError('apikey revoke needs --id');
      requireUuid('--id', options.id);
      await revokeApiKey(ctx, options.brand, options.id);
      print(`revoked ${options.id}`);
      return;
    default:
      throw new UsageError(`unknown apikey action "${action}"`);
  }
}

/** `mintctl workspace enable-api|disable-api --brand <id>`. */
export async function workspaceCommand(ctx: UseCaseContext, action: string, brand: string, print: Print): Promise<void> {
  if (action !== 'enable-api' && action !== 'disable-api') throw new UsageError(`unknown workspace action "${action}"`);
  requireUuid('--brand', brand);
  await setApiAccess(ctx, brand, action === 'enable-api');
  print(`API access ${action === 'enable-api' ? 'enabled' : 'disabled'} for ${brand}`);
}

/** Throws a UsageError naming `option` unless `value` is a uuid. */
function requireUuid(option: string, value: string): void {
  if (!isUuid(value)) throw new UsageError(`${option} must be a uuid`);
}

/** A mistake in the command line; printed with the usage text. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * `mintctl scans ship-log`: reads a caching proxy's log of cache hits from `input` (one line per
 * hit, as varnishncsa writes it with the format in docs/operations/scaling.md) and writes the
 * scans into the ledger through the scan ingest until the input ends (or SIGTERM), then prints
 * `lines=N shipped=N skipped=N`.
 */
export async function shipLogCommand(ctx: UseCaseContext, input: NodeJS.ReadableStream, print: Print): Promise<void> {
  const shipper = createEdgeLogShipper(ctx, {
    alerts: createScanAlerts(ctx),
    onError: (error) => process.stderr.write(`mintctl scans ship-log: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const stop = () => reader.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  for await (const line of reader) if (line.trim() !== '') shipper.line(line);
  await shipper.close(30_000);
  const { lines, shipped, skipped } = shipper.stats();
  print(`lines=${lines} shipped=${shipped} skipped=${skipped}`);
}
