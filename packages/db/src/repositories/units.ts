import type { UnitStatus } from '@mint/domain';
import type { Em } from '../orm.ts';
import { pgArray, run } from './sql.ts';

/** One chunk of units of a batch, ready to insert. */
export interface UnitChunk {
  readonly brandId: string;
  readonly mintBatchId: string;
  /** Sequence number of the first serial. */
  readonly firstSeq: number;
  /** Serials in sequence order. */
  readonly serials: readonly string[];
  readonly gtin: string | null;
  /** Resolver URL of a unit = this prefix followed by its serial. */
  readonly resolverUrlPrefix: string;
  readonly status: UnitStatus;
  readonly createdAt: Date;
}

/**
 * Inserts a chunk of units with one statement: the serials travel as one array parameter and
 * everything else is derived in SQL, bypassing the ORM's unit of work. A repeated chunk violates
 * (mint_batch_id, seq) and fails instead of minting twice.
 */
export async function insertUnitChunk(em: Em, chunk: UnitChunk): Promise<number> {
  return run(
    em,
    `insert into mint_units (brand_id, id, mint_batch_id, seq, serial, gtin, resolver_url, status, created_at, activated_at)
     select ?, gen_random_uuid(), ?, ?::int + s.ord::int - 1, s.serial, ?, ? || s.serial, ?, ?, ?
     from unnest(?::text[]) with ordinality as s(serial, ord)`,
    [
      chunk.brandId,
      chunk.mintBatchId,
      chunk.firstSeq,
      chunk.gtin,
      chunk.resolverUrlPrefix,
      chunk.status,
      chunk.createdAt,
      chunk.status === 'active' ? chunk.createdAt : null,
      pgArray(chunk.serials),
    ],
  );
}
