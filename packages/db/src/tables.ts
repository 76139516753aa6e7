import type { InferKyselyDB } from '@mikro-orm/sql';
import type { ColumnType } from 'kysely';
import type { entities } from './entities/index.ts';

/** Table and column types as MikroORM infers them from the entities (snake_case, as in the schema). */
type Inferred = InferKyselyDB<(typeof entities)[number]>;

/**
 * int8 columns: the entities map them to numbers, but PostgreSQL's driver returns them as text,
 * so reads go through Number().
 */
interface Int8Columns {
  mint_kpis: 'total_tokens_minted' | 'active_tokens' | 'batches_created' | 'exported_printed';
  outbox: 'id';
  scan_events: 'id';
  scan_daily_rollups: 'scans' | 'never_issued';
  scan_rollup_days: 'version' | 'rolled_version';
  container_settings: 'next_serial_ref';
  container_mints: 'first_serial_ref';
  brand_serial_keys: 'next_ordinal';
  mint_batches: 'serial_ordinal';
}

/** json/jsonb columns: written as JSON text (a JavaScript array parameter would become a PostgreSQL array), read parsed. */
interface JsonColumns {
  mint_events: 'payload';
  mint_preflights: 'blocking_reasons';
  product_imports: 'errors';
  resolver_links: 'hreflang' | 'context';
  webhook_deliveries: 'body';
  payload_packs: 'profile';
  scan_alert_settings: 'withdrawn_ignored';
  passport_drafts: 'content';
  passport_versions: 'content';
  passport_signing_keys: 'public_jwk';
  serial_moves: 'target' | 'cursor';
  epcis_events: 'body';
}

/** JSON text for a json column holding `T`; null too where `T` admits it. */
type Json<T> = string | (null extends T ? null : never);

/** Both drivers keep timestamps as text (MikroORM's type parsers), so a timestamp reads as a string; a Date is accepted everywhere. */
type Read<T> = T extends Date ? string | Date : T;

type Column<Table extends string, Name, T> = Name extends (Table extends keyof Int8Columns ? Int8Columns[Table] : never)
  ? ColumnType<string | number, number | undefined, number>
  : Name extends (Table extends keyof JsonColumns ? JsonColumns[Table] : never)
    ? T extends ColumnType<infer S, unknown, unknown>
      ? ColumnType<S, Json<S> | undefined, Json<S>>
      : ColumnType<T, Json<T>, Json<T>>
    : T extends ColumnType<infer S, infer I, infer U>
      ? ColumnType<Read<S>, I, U>
      : ColumnType<Read<T>, T, T>;

/**
 * The schema as Kysely sees it, derived from the `defineEntity` entities (the one definition of
 * every table), with the column types adjusted to what the drivers actually return.
 */
export type Tables = {
  [Table in keyof Inferred & string]: { [Name in keyof Inferred[Table]]: Column<Table, Name, Inferred[Table][Name]> };
};
