import { Migration } from '@mikro-orm/migrations';

/**
 * `epcis_events.partner_id`: the partner whose key reported the event (a capture, a move, a
 * container mint, pack or unpack under a partner key) or to whom serials were allocated; null for
 * the brand's own events. A partner key's `GET /epcis/events` answers only its own, by the partial
 * index. Existing events of partner moves and allocations get their partner (from the move's
 * target, the allocation's possessing party); container events written under partner keys before
 * this stay the brand's.
 */
export class Migration20261129030000_epcis_partner extends Migration {
  override name = 'Migration20261129030000_epcis_partner';

  override up(): void | Promise<void> {
    this.addSql(`alter table "epcis_events" add "partner_id" uuid null;`);
    this.addSql(
      `create index "epcis_events_partner_time_index" on "epcis_events" ("brand_id", "partner_id", "event_time", "id") where "partner_id" is not null;`,
    );
    this.addSql(`update "epcis_events" e set "partner_id" = (m."target"->>'partner_id')::uuid from "serial_moves" m
      where m."brand_id" = e."brand_id" and m."id" = e."move_id" and m."target" ? 'partner_id';`);
    this.addSql(`update "epcis_events" set "partner_id" = substr("body"->'destinationList'->0->>'destination', 10)::uuid
      where "biz_step" = 'reserving' and "body"->'destinationList'->0->>'destination' like 'urn:uuid:%';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "epcis_events_partner_time_index";`);
    this.addSql(`alter table "epcis_events" drop column "partner_id";`);
  }
}
