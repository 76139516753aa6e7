// `mintctl partner ...`: the brand's side of partner allocation against the database (create a
// partner, grant it a key, list, revoke), and the partner's side against a running API with its
// partner key (allocate serials, report and return them, see its grant).

import { randomUUID } from 'node:crypto';
import { createMintClient, SerialAction } from '@mint/client';
import { isUuid } from '@mint/domain';
import { createPartner, grantPartnerKey, listPartners, revokePartnerKey, type UseCaseContext } from '@mint/usecases';
import { UsageError, type Print } from './admin.ts';

/** Options of the brand's partner commands. */
export interface PartnerAdminOptions {
  readonly brand: string;
  readonly name?: string;
  readonly partner?: string;
  readonly product?: string;
  readonly batch?: string;
  readonly quota?: string;
  readonly id?: string;
}

const uuid = (option: string, value: string | undefined): string => {
  if (value === undefined || !isUuid(value)) throw new UsageError(`${option} must be a uuid`);
  return value;
};

/** The system actor of the command line, for the audit trail. */
const cliActor = { id: 'mintctl' };

/**
 * `mintctl partner create --brand B --name N`, `partner grant --brand B --partner P --name N
 * (--product ID | --batch ID) --quota Q` (prints the key once), `partner list --brand B`,
 * `partner revoke --brand B --id KEY`.
 */
export async function partnerAdminCommand(ctx: UseCaseContext, action: string, o: PartnerAdminOptions, print: Print): Promise<void> {
  const brandId = uuid('--brand', o.brand);
  switch (action) {
    case 'create': {
      if (!o.name) throw new UsageError('partner create needs --name');
      print(JSON.stringify({ partner_id: (await createPartner(ctx, cliActor, { brandId, name: o.name })).partnerId }));
      return;
    }
    case 'grant': {
      if ((o.product === undefined) === (o.batch === undefined)) throw new UsageError('partner grant needs exactly one of --product <id> or --batch <id>');
      const quota = Number(o.quota);
      if (!Number.isInteger(quota) || quota < 1) throw new UsageError('partner grant needs --quota <whole number from 1>');
      const granted = await grantPartnerKey(ctx, cliActor, {
        brandId,
        partnerId: uuid('--partner', o.partner),
        name: o.name ?? 'partner',
        quota,
        productId: o.product === undefined ? null : uuid('--product', o.product),
        mintBatchId: o.batch === undefined ? null : uuid('--batch', o.batch),
      });
      print(JSON.stringify({ key_id: granted.keyId, api_key: granted.apiKey, partner_id: granted.partnerId, quota: granted.quota }));
      return;
    }
    case 'list':
      for (const p of await listPartners(ctx, brandId)) print(JSON.stringify(p));
      return;
    case 'revoke':
      await revokePartnerKey(ctx, brandId, uuid('--id', o.id));
      print(`revoked ${o.id}`);
      return;
    default:
      throw new UsageError(`unknown partner action "${action}"`);
  }
}

/** Options of the partner's own commands. */
export interface PartnerRemoteOptions {
  readonly api?: string;
  readonly apiKey?: string;
  readonly brand?: string;
  readonly quantity?: string;
  readonly serials?: string;
  readonly key?: string;
}

const partnerActionNames = ['encode', 'commission', 'scrap', 'return'] as const;

/**
 * The partner's commands, with its partner key (`--api-key` or MINT_API_KEY) against the API
 * (`--api` or MINT_API_URL) for the brand (`--brand` or MINT_BRAND): `partner allocate --quantity N
 * [--key K]` prints one serial a line; `partner encode|commission|scrap|return --serials A,B [--key K]`
 * reports a move and its refusals; `partner return-unused [--key K]` returns every unused serial
 * of the allocation (the executor finishes it: `running` until then); `partner status` prints the key's grant.
 */
export async function partnerRemoteCommand(action: string, o: PartnerRemoteOptions, print: Print, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const api = (o.api ?? env.MINT_API_URL ?? '').replace(/\/+$/, '');
  const apiKey = o.apiKey ?? env.MINT_API_KEY;
  const brandId = uuid('--brand', o.brand ?? env.MINT_BRAND);
  if (api === '') throw new UsageError('partner commands need --api <url> (or MINT_API_URL)');
  if (!apiKey) throw new UsageError('partner commands need the partner key: --api-key <key> (or MINT_API_KEY)');
  const client = createMintClient({ baseUrl: api, apiKey });
  if (action === 'allocate') {
    const quantity = Number(o.quantity);
    if (!Number.isInteger(quantity) || quantity < 1) throw new UsageError('partner allocate needs --quantity <whole number from 1>');
    const a = await client.partners.allocateSerials({ brandId, quantity, idempotencyKey: o.key ?? randomUUID() });
    for (const s of a.serials) print(s.serial);
    process.stderr.write(`allocation ${a.requestId}${a.replayed ? ' (replayed)' : ''}: ${a.serials.length} serials, quota left ${a.quotaLeft}\n`);
    return;
  }
  if (action === 'status') {
    const g = await client.partners.getPartnerAllocation({ brandId });
    print(
      JSON.stringify({
        partner: g.partnerName,
        key_id: g.keyId,
        product_id: g.productId,
        mint_batch_id: g.mintBatchId,
        quota: g.quota,
        allocated: g.allocated,
      }),
    );
    return;
  }
  if (action === 'return-unused') {
    const { move } = await client.partners.returnUnusedSerials({ brandId, idempotencyKey: o.key ?? randomUUID() });
    if (move === undefined) throw new Error('ReturnUnusedSerials answered no move');
    print(`move ${move.moveId} ${move.replayed ? '(replayed) ' : ''}${move.status}: ${move.moved} returned of ${move.total} unused`);
    return;
  }
  if (!(partnerActionNames as readonly string[]).includes(action)) throw new UsageError(`unknown partner action "${action}"`);
  const serials = (o.serials ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (serials.length === 0) throw new UsageError(`partner ${action} needs --serials A,B`);
  const { move } = await client.mint.moveSerials({
    brandId,
    action: SerialAction[action.toUpperCase() as 'ENCODE'],
    target: { case: 'serials', value: { serials } },
    idempotencyKey: o.key ?? randomUUID(),
  });
  if (move === undefined) throw new Error('MoveSerials answered no move');
  print(`move ${move.moveId} ${move.replayed ? '(replayed) ' : ''}done: ${move.moved} moved, ${move.refused} refused of ${move.total}`);
  for (const r of move.refusals) print(`refused ${r.serial ?? `${r.mintBatchId} #${r.seq}`}: ${r.refusal}`);
  if (move.refused > 0) process.exitCode = 1;
}
