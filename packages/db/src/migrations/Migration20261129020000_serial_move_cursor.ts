import { Migration } from '@mikro-orm/migrations';

/**
 * `serial_moves.cursor`: where a chunked move on a container goes on (the position in its tree of
 * containers, and the last unit moved of a container larger than a chunk); null for every other move.
 */
export class Migration20261129020000_serial_move_cursor extends Migration {
  override name = 'Migration20261129020000_serial_move_cursor';

  override up(): void | Promise<void> {
    this.addSql(`alter table "serial_moves" add column "cursor" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "serial_moves" drop column if exists "cursor";`);
  }
}
