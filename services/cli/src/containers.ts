// mintctl's aggregation commands against a running API (through @mint/client, like any client):
// container-settings, mint-containers, pack and unpack.

import { randomUUID } from 'node:crypto';
import { createMintClient } from '@mint/client';
import { UsageError, type Print } from './admin.ts';
import { resolveRemote, type RemoteOptions } from './remote.ts';

/** Options of the aggregation commands. */
export interface ContainerOptions extends RemoteOptions {
  readonly prefix?: string;
  readonly maxDepth?: string;
  readonly level?: string;
  readonly count?: string;
  readonly extension?: string;
  readonly sscc?: string;
  readonly serials?: string;
  readonly ssccs?: string;
  readonly key?: string;
}

const list = (v: string | undefined) =>
  v === undefined
    ? []
    : v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
const whole = (v: string | undefined, name: string, min: number) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number from ${min}, not "${v}"`);
  return n;
};

/**
 * `mintctl container-settings [--prefix P] [--max-depth n]`, `mintctl mint-containers --level case
 * --count n [--extension d] [--key k]` (prints one SSCC a line), `mintctl pack|unpack --sscc S
 * [--serials A,B] [--ssccs X,Y] [--key k]` (unpack without items: everything in the container).
 * A fresh idempotency key unless --key repeats one.
 */
export async function containerCommand(
  command: 'container-settings' | 'mint-containers' | 'pack' | 'unpack',
  options: ContainerOptions,
  print: Print,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const remote = resolveRemote(options, env);
  if (!remote.brand) throw new UsageError('--brand is required (or log in with one: `mintctl login --brand <id>`)');
  const brandId = remote.brand;
  const client = createMintClient({ baseUrl: remote.api, token: remote.token });
  const idempotencyKey = options.key ?? randomUUID();
  if (command === 'container-settings') {
    if (options.prefix === undefined && options.maxDepth === undefined) throw new UsageError('container-settings needs --prefix, --max-depth or both');
    const s = await client.mint.setContainerSettings({ brandId, gs1CompanyPrefix: options.prefix, maxDepth: whole(options.maxDepth, 'max-depth', 1) });
    print(`GS1 company prefix ${s.gs1CompanyPrefix ?? '(none)'}, max depth ${s.maxDepth}`);
    return;
  }
  if (command === 'mint-containers') {
    if (options.level === undefined) throw new UsageError('mint-containers needs --level (case, pallet, ...)');
    const count = whole(options.count, 'count', 1);
    if (count === undefined) throw new UsageError('mint-containers needs --count');
    const m = await client.mint.mintContainers({
      brandId,
      level: options.level,
      count,
      extensionDigit: whole(options.extension, 'extension', 0) ?? 0,
      idempotencyKey,
    });
    for (const sscc of m.ssccs) print(sscc);
    return;
  }
  if (options.sscc === undefined) throw new UsageError(`${command} needs --sscc`);
  const request = { brandId, sscc: options.sscc, serials: list(options.serials), ssccs: list(options.ssccs), idempotencyKey };
  if (command === 'pack' && request.serials.length + request.ssccs.length === 0) throw new UsageError('pack needs --serials, --ssccs or both');
  const r = command === 'pack' ? await client.mint.packContainer(request) : await client.mint.unpackContainer(request);
  print(
    `${command === 'pack' ? 'packed' : 'unpacked'} ${r.units} units and ${r.containers} containers ${command === 'pack' ? 'into' : 'out of'} ${r.sscc}${r.replayed ? ' (replayed)' : ''}`,
  );
}
