import { Migration } from '@mikro-orm/migrations';

/**
 * Serial lifecycle: `unit_states` (a row only for a unit whose state differs from its minted one,
 * keyed by its batch and seq), `serial_moves` (requested moves with their idempotency key,
 * progress and refusal report) and `epcis_events` (the GS1 EPCIS 2.0 events of every move, with a
 * GIN index on the EPCs they name for MATCH_epc). Nothing of `mint_units` changes.
 */
export class Migration20261128110000 extends Migration {
  override name = 'Migration20261128110000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "unit_states" ("brand_id" uuid not null, "mint_batch_id" uuid not null, "seq" int not null, "state" text not null, "reason" text null, "move_id" uuid not null, "changed_at" timestamptz(3) not null, primary key ("brand_id", "mint_batch_id", "seq"));`,
    );
    this.addSql(
      `create table "serial_moves" ("brand_id" uuid not null, "id" uuid not null, "idempotency_key" text not null, "request_hash" text not null, "action" text not null, "reason" text null, "target" jsonb not null, "status" text not null, "total" int not null, "moved" int not null, "refused" int not null, "refusals" jsonb not null, "next_seq" int null, "actor" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "serial_moves" add constraint "serial_moves_key_unique" unique ("brand_id", "idempotency_key");`);
    this.addSql(`create index "serial_moves_running_index" on "serial_moves" ("updated_at") where "status" = 'running';`);
    this.addSql(
      `create table "epcis_events" ("brand_id" uuid not null, "id" uuid not null, "move_id" uuid null, "event_type" text not null, "event_time" timestamptz(3) not null, "record_time" timestamptz(3) not null, "biz_step" text not null, "disposition" text null, "epcs" text[] not null, "body" jsonb not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "epcis_events_time_index" on "epcis_events" ("brand_id", "event_time", "id");`);
    this.addSql(`create index "epcis_events_epcs_index" on "epcis_events" using gin ("epcs");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "epcis_events" cascade;`);
    this.addSql(`drop table if exists "serial_moves" cascade;`);
    this.addSql(`drop table if exists "unit_states" cascade;`);
  }
}
