import { Migration } from '@mikro-orm/migrations';

/**
 * A move's refused units as rows of `serial_move_refusals` (keyed by the move and the refusal's
 * place in its report), appended by each chunk in the chunk's transaction, instead of one JSON
 * value on `serial_moves` rewritten whole by every chunk (a move refusing most of 1,000,000 units
 * rewrote ever longer values: quadratic). Existing reports are copied in their order. And a move's
 * failed attempts: `attempts` (consecutive failed chunks, reset by a committed one), `not_before`
 * (no worker claims the move before it: the retry backoff) and `error` (why it failed, when its
 * status is `failed`).
 */
export class Migration20261130020000_serial_move_refusals extends Migration {
  override name = 'Migration20261130020000_serial_move_refusals';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "serial_move_refusals" ("brand_id" uuid not null, "move_id" uuid not null, "ord" int not null, "serial" text null, "mint_batch_id" uuid null, "seq" int null, "refusal" text not null, "state" text null, "reason" text null, primary key ("brand_id", "move_id", "ord"));`,
    );
    this.addSql(`insert into "serial_move_refusals" ("brand_id", "move_id", "ord", "serial", "mint_batch_id", "seq", "refusal", "state", "reason")
      select m."brand_id", m."id", (r.n - 1)::int, r.v->>'serial', (r.v->>'mint_batch_id')::uuid, (r.v->>'seq')::int, r.v->>'refusal', r.v->>'state', r.v->>'reason'
      from "serial_moves" m cross join lateral jsonb_array_elements(m."refusals") with ordinality as r(v, n);`);
    this.addSql(`alter table "serial_moves" drop column "refusals";`);
    this.addSql(
      `alter table "serial_moves" add column "attempts" int not null default 0, add column "not_before" timestamptz(3) null, add column "error" text null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "serial_moves" drop column if exists "attempts", drop column if exists "not_before", drop column if exists "error";`);
    this.addSql(`update "serial_moves" set "status" = 'running' where "status" = 'failed';`);
    this.addSql(`alter table "serial_moves" add column "refusals" jsonb not null default '[]';`);
    this.addSql(`update "serial_moves" m set "refusals" = r.list from (
        select "brand_id", "move_id", jsonb_agg(jsonb_build_object('serial', "serial", 'mint_batch_id', "mint_batch_id", 'seq', "seq", 'refusal', "refusal", 'state', "state", 'reason', "reason") order by "ord") as list
        from "serial_move_refusals" group by 1, 2) r
      where m."brand_id" = r."brand_id" and m."id" = r."move_id";`);
    this.addSql(`alter table "serial_moves" alter column "refusals" drop default;`);
    this.addSql(`drop table if exists "serial_move_refusals" cascade;`);
  }
}
