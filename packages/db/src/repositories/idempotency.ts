import type { Em } from '../orm.ts';
import { changed, first, rows } from './kysely.ts';

/** A kept Idempotency-Key of a workspace. */
export interface IdempotencyRow {
  readonly brandId: string;
  readonly key: string;
  readonly route: string;
  readonly requestHash: string;
  /** in_progress or completed. */
  readonly state: string;
  readonly responseStatus: number | null;
  /** The first response's body exactly as it was sent (JSON text), so a replay answers the same bytes. */
  readonly responseBody: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/**
 * Claims a key for a first request (INSERT ... ON CONFLICT DO NOTHING): true when this call
 * inserted the in_progress record, false when the key was already there.
 */
export async function insertIdempotencyKey(
  em: Em,
  row: { readonly brandId: string; readonly key: string; readonly route: string; readonly requestHash: string; readonly now: Date; readonly expiresAt: Date },
): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .insertInto('idempotency_records')
        .values({
          brand_id: row.brandId,
          key: row.key,
          route: row.route,
          request_hash: row.requestHash,
          state: 'in_progress',
          response_status: null,
          response_body: null,
          created_at: row.now,
          expires_at: row.expiresAt,
        })
        .onConflict((oc) => oc.columns(['brand_id', 'key']).doNothing()),
    )) === 1
  );
}

/** The kept record of a workspace's key, or null. */
export async function findIdempotencyKey(em: Em, brandId: string, key: string): Promise<IdempotencyRow | null> {
  const r = await first(em, (db) => db.selectFrom('idempotency_records').selectAll().where('brand_id', '=', brandId).where('key', '=', key));
  if (r === undefined) return null;
  return {
    brandId: r.brand_id,
    key: r.key,
    route: r.route,
    requestHash: r.request_hash,
    state: r.state,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
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
  return (
    (await changed(em, (db) =>
      db
        .updateTable('idempotency_records')
        .set({
          route: row.route,
          request_hash: row.requestHash,
          state: 'in_progress',
          response_status: null,
          response_body: null,
          created_at: row.now,
          expires_at: row.expiresAt,
        })
        .where('brand_id', '=', seen.brandId)
        .where('key', '=', seen.key)
        .where('created_at', '=', seen.createdAt),
    )) === 1
  );
}

/**
 * Stores the response of the request that holds the key (in_progress -> completed), its body as
 * the text that was sent; false when it no longer held it.
 */
export async function completeIdempotencyKey(
  em: Em,
  held: { readonly brandId: string; readonly key: string; readonly createdAt: Date },
  response: { readonly status: number; readonly text: string },
): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('idempotency_records')
        .set({ state: 'completed', response_status: response.status, response_body: response.text })
        .where('brand_id', '=', held.brandId)
        .where('key', '=', held.key)
        .where('created_at', '=', held.createdAt)
        .where('state', '=', 'in_progress'),
    )) === 1
  );
}

/** Forgets a key whose request failed without a response worth keeping, so a retry runs again. */
export async function deleteIdempotencyKey(em: Em, held: { readonly brandId: string; readonly key: string; readonly createdAt: Date }): Promise<void> {
  await changed(em, (db) =>
    db
      .deleteFrom('idempotency_records')
      .where('brand_id', '=', held.brandId)
      .where('key', '=', held.key)
      .where('created_at', '=', held.createdAt)
      .where('state', '=', 'in_progress'),
  );
}

/**
 * Deletes up to `limit` records that expired before `now`; returns how many. The keys are read
 * first, then deleted by key one brand at a time (re-checking the expiry), never by ctid: on Citus
 * each delete is routed to one shard.
 */
export async function purgeExpiredIdempotencyKeys(em: Em, now: Date, limit: number): Promise<number> {
  const expired = await rows(em, (db) => db.selectFrom('idempotency_records').select(['brand_id', 'key']).where('expires_at', '<', now).limit(limit));
  const keys = new Map<string, string[]>();
  for (const r of expired) keys.set(r.brand_id, [...(keys.get(r.brand_id) ?? []), r.key]);
  let deleted = 0;
  for (const [brandId, brandKeys] of keys) {
    deleted += await changed(em, (db) =>
      db.deleteFrom('idempotency_records').where('brand_id', '=', brandId).where('key', 'in', brandKeys).where('expires_at', '<', now),
    );
  }
  return deleted;
}
