import { Migration } from '@mikro-orm/migrations';

/**
 * Pack profiles: `payload_packs.profile` (formats, unit range, symbology, label layout; jsonb) and
 * `purpose` (completion, request or void). Packs made before keep what they held (csv and jsonl of
 * the whole batch) and count as the completion pack, so a batch still gets one automatic pack.
 */
export class Migration20261126040000 extends Migration {
  override name = 'Migration20261126040000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "payload_packs" add "profile" jsonb not null default '{"formats":["csv","jsonl"],"seqFrom":null,"seqTo":null,"symbology":"qr","layout":null}';`,
    );
    this.addSql(`alter table "payload_packs" add "purpose" text not null default 'completion';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "payload_packs" drop column "purpose";`);
    this.addSql(`alter table "payload_packs" drop column "profile";`);
  }
}
