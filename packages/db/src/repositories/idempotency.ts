import type { Em } from '../orm.ts';
import { query, run } from './sql.ts';

/** A kept Idempotency-Key of a workspace. */
export interface IdempotencyRow {
  readonly brandId: string;
  readonly key: string;
  readonly route: string;
  readonly requestHash: string;
  /** in_progress or completed. */
  readonly state: string;
  readonly responseStatus: number | null;
  readonly responseBody: unknown;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

interface Row {
  brand_id: string; key: string; route: string; request_hash: string; state: string;
  response_status: number | null; response_body: unknown; created_at: Date; expires_at: Date;
}

/**
 * Claims a key for a first request (INSERT ... ON CONFLICT DO NOTHING): true when this call
 * inserted the in_progress record, false when the key was already there.
 */
export async function insertIdempotencyKey(
  em: Em,
  row: { readonly brandId: string; readonly key: string; readonly route: string; readonly requestHash: string; readonly now: Date; readonly expiresAt: Date },
): Promise<boolean> {
  const inserted = await run(
    em,
    `insert into idempotency_records (brand_id, key, route, request_hash, state, response_status, response_body, created_at, expires_at)
     values (?, ?, ?, ?, 'in_progress', null, null, ?, ?) on conflict (brand_id, key) do nothing`,
    [row.brandId, row.key, row.route, row.requestHash, row.now, row.expiresAt],
  );
  return inserted === 1;
}

/** The kept record of a workspace's key, or null. */
export async function findIdempotencyKey(em: Em, brandId: string, key: string): Promise<IdempotencyRow | null> {
  const [r] = await query<Row>(em, `select * from idempotency_records where brand_id = ? and key = ?`, [brandId, key]);
  if (r === undefined) return null;
  return {
    brandId: r.brand_id, key: r.key, route: r.route, requestHash: r.request_hash, state: r.state,
    responseStatus: r.response_status, responseBody: r.response_body, createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at),
  };
}

/**
 * Takes over an expired or abandoned record by compare-and-set on the created_at that was read:
 * resets it to in_progress for this request. False when someone else took it first.
 */
export async function retakeIdempotencyKey(
  em: Em,
  seen: { readonly brandId: string; readonly key: string; readonly createdAt: Date },
  row: { readonly route: string; readonly requestHash: string; readonly now: Date; readonly expiresAt: Date },
): Promise<boolean> {
  const changed = await run(
    em,
    `update idempotency_records set route = ?, request_hash = ?, state = 'in_progress', response_status = null, response_body = null,
       created_at = ?, expires_at = ?
     where brand_id = ? and key = ? and created_at = ?`,
    [row.route, row.requestHash, row.now, row.expiresAt, seen.brandId, seen.key, seen.createdAt],
  );
  return changed === 1;
}

/** Stores the response of the request that holds the key (in_progress -> completed); false when it no longer held it. */
export async function completeIdempotencyKey(
  em: Em,
  held: { readonly brandId: string; readonly key: string; readonly createdAt: Date },
  response: { readonly status: number; readonly body: unknown },
): Promise<boolean> {
  const changed = await run(
    em,
    `update idempotency_records set state = 'completed', response_status = ?, response_body = ?::jsonb
     where brand_id = ? and key = ? and created_at = ? and state = 'in_progress'`,
    [response.status, JSON.stringify(response.body), held.brandId, held.key, held.createdAt],
  );
  return changed === 1;
}

/** Forgets a key whose request failed without a response worth keeping, so a retry runs again. */
export async function deleteIdempotencyKey(em: Em, held: { readonly brandId: string; readonly key: string; readonly createdAt: Date }): Promise<void> {
  await run(em, `delete from idempotency_records where brand_id = ? and key = ? and created_at = ? and state = 'in_progress'`, [held.brandId, held.key, held.createdAt]);
}

/** Deletes up to `limit` records that expired before `now`; returns how many. */
export async function purgeExpiredIdempotencyKeys(em: Em, now: Date, limit: number): Promise<number> {
  return run(
    em,
    `delete from idempotency_records where ctid in (select ctid from idempotency_records where expires_at < ? limit ?)`,
    [now, limit],
  );
}
