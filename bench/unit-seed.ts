// Scratch database and a brand with N minted serial units (GS1 Digital Link URLs), filled in SQL
// with generate_series, for bench/packs.ts and bench/resolver.ts.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '@mint/db';
import { run } from '../test/support/sql.ts';
import { createUseCaseContext, createUser, createWorkspace, upsertProduct, type UseCaseContext } from '@mint/usecases';
import { createScratchDatabase } from './scratch-database.ts';

/** A seeded scratch database. */
export interface Seeded {
  readonly url: string;
  readonly db: Database;
  readonly ctx: UseCaseContext;
  readonly brandId: string;
  /** The user who created the product (no role in the brand). */
  readonly userId: string;
  readonly slug: string;
  readonly gtin: string;
  readonly batchId: string;
  readonly publicBaseUrl: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * Creates and migrates a scratch database, a brand with a product (GTIN 09506000134352, passport
 * page set) and one minted serial batch of `units` units (serial = 20 upper-case hex characters of
 * md5(seq)), then VACUUM ANALYZE.
 */
export async function seedUnits(prefix: string, units: number, publicBaseUrl = 'http://127.0.0.1:8080'): Promise<Seeded> {
  const scratch = await createScratchDatabase(prefix);
  const db = await openDatabase({ url: scratch.url }, { poolSize: 8, applicationName: prefix });
  const ctx = createUseCaseContext({ db, publicBaseUrl });
  const brand = await createWorkspace(ctx, { name: 'Bench Brand' });
  const user = await createUser(ctx, { email: `bench-${brand.slug}@bench.example`, name: 'Bench' });
  const gtin = '09506000134352';
  const { product } = await upsertProduct(
    ctx,
    { id: user.id },
    {
      brandId: brand.id,
      sku: 'BENCH-SKU',
      name: 'Bench product',
      gtin,
      commercialStatus: 'ACTIVE',
      mintReadinessStatus: 'READY',
      passportUrl: 'https://passports.example/bench',
    },
  );
  const em = db.em.fork();
  const jobId = randomUUID();
  const batchId = randomUUID();
  const at = new Date('2026-01-01T00:00:00.000Z');
  await run(
    em,
    `insert into mint_jobs (brand_id, id, status, scope_type, requested_quantity, product_id, lease_token, attempts, created_at, updated_at, finished_at)
     values (?, ?, 'COMPLETED', 'serial', ?, ?, 1, 0, ?, ?, ?)`,
    [brand.id, jobId, units, product.id, at, at, at],
  );
  await run(
    em,
    `insert into mint_batches (brand_id, id, mint_job_id, product_id, status, identity_mode, activation_mode, requested_quantity, minted_quantity,
       resolver_base_url, gtin, created_at, updated_at)
     values (?, ?, ?, ?, 'minted', 'serial', 'active_at_mint', ?, ?, ?, ?, ?, ?)`,
    [brand.id, batchId, jobId, product.id, units, units, brand.resolverBaseUrl, gtin, at, at],
  );
  await run(
    em,
    `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, status, created_at, activated_at)
     select ?::uuid, gen_random_uuid(), ?::uuid, g, s.serial, 'active', ?, ?
     from generate_series(1, ?::int) g
     cross join lateral (select upper(substr(md5(g::text), 1, 20)) as serial) s`,
    [brand.id, batchId, at, at, units],
  );
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  await client.query('VACUUM ANALYZE');
  await client.end();
  return {
    url: scratch.url,
    db,
    ctx,
    brandId: brand.id,
    userId: user.id,
    slug: brand.slug,
    gtin,
    batchId,
    publicBaseUrl,
    async drop() {
      await db.close(true);
      await scratch.drop();
    },
  };
}

/** The serial of unit `seq` as seeded. */
export function seededSerial(seq: number, md5: (text: string) => string): string {
  return md5(String(seq)).slice(0, 20).toUpperCase();
}
