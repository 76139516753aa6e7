import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, run, unitsWithUrls } from '../../../test/support/sql.ts';
import { createFsPackStore, type PackStore } from '@mint/store';
import {
  claimPayloadPack,
  generatePayloadPack,
  getMintKpis,
  listMintEvents,
  listPayloadPacks,
  packColumns,
  setMintBatchStatus,
  type PackManifest,
} from '@mint/usecases';
import { mintCompleted, tempStoreDir } from '../../../test/support/pack-fixtures.ts';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
let store: PackStore;
beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
  store = createFsPackStore(storeDir.dir);
});
afterAll(async () => {
  await app.close();
  await storeDir.remove();
});

async function packOf(batchId: string) {
  const [row] = await query<{ id: string; status: string; storage_path: string | null; unit_count: number | null; attempts: number; error: string | null }>(
    app.db.em.fork(),
    `select id, status, storage_path, unit_count, attempts, error from payload_packs where mint_batch_id = ? and purpose = 'completion'`,
    [batchId],
  );
  return row!;
}

async function batchStatus(batchId: string): Promise<string> {
  const [row] = await query<{ status: string }>(app.db.em.fork(), `select status from mint_batches where id = ?`, [batchId]);
  return row!.status;
}

/** Claims packs until the one of `packId` comes up; the other packs claimed on the way are put back to pending. */
async function claimOnly(packId: string, leaseMs = 30_000) {
  const others: string[] = [];
  try {
    for (;;) {
      const claim = await claimPayloadPack(app.ctx, leaseMs);
      if (claim === null) throw new Error(`pack ${packId} was not claimable`);
      if (claim.id === packId) return claim;
      others.push(claim.id);
    }
  } finally {
    for (const id of others) await run(app.db.em.fork(), `update payload_packs set status = 'pending', lease_expires_at = null where id = ?`, [id]);
  }
}

function sha256(text: Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('a payload pack of 100,000 units', () => {
  it('is created pending with the job, then generated into CSV, JSON Lines and a manifest that agree with the database row for row', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 100_000, { chunk: 20_000 });
    const pending = await packOf(mintBatchId);
    expect(pending).toMatchObject({ status: 'pending', storage_path: null, unit_count: null });
    const listed = await listPayloadPacks(app.ctx, brand.brandId, { limit: null, cursor: null });
    expect(listed.items.map((p) => [p.id, p.status, p.storagePath])).toEqual([[pending.id, 'pending', null]]);
    expect(JSON.stringify(listed.items)).not.toMatch(/https?:\/\//);

    const claim = await claimOnly(pending.id);
    const result = await generatePayloadPack(app.ctx, claim, { store, pageSize: 7_000 });
    expect(result).toEqual({ kind: 'ready', unitCount: 100_000, storagePath: `${brand.brandId}/${pending.id}` });

    const ready = await packOf(mintBatchId);
    expect(ready).toMatchObject({ status: 'ready', storage_path: `${brand.brandId}/${pending.id}`, unit_count: 100_000 });
    expect(ready.storage_path).not.toMatch(/^\/|:\/\//);
    expect(await batchStatus(mintBatchId)).toBe('exported');
    // The automatic pack exports the batch; nothing was printed, so exported_printed does not count it.
    expect((await getMintKpis(app.ctx, brand.brandId)).exportedPrinted).toBe(0);
    const events = (
      await listMintEvents(app.ctx, brand.brandId, { limit: 100, cursor: null, eventType: 'payload_pack_ready', entityType: null, entityId: null })
    ).items;
    expect(events.map((e) => [e.entityType, e.entityId])).toEqual([['payload_pack', pending.id]]);

    const folder = join(storeDir.dir, brand.brandId, pending.id);
    const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as PackManifest;
    const csvBytes = await readFile(join(folder, 'units.csv'));
    const jsonlBytes = await readFile(join(folder, 'units.jsonl'));
    expect(manifest).toMatchObject({ pack_id: pending.id, brand_id: brand.brandId, mint_batch_id: mintBatchId, row_count: 100_000, unit_count: 100_000 });
    const epcisBytes = await readFile(join(folder, 'epcis.json'));
    expect(manifest.files).toEqual([
      { name: 'units.csv', format: 'csv', rows: 100_000, count: 100_000, bytes: csvBytes.length, sha256: sha256(csvBytes) },
      { name: 'units.jsonl', format: 'jsonl', rows: 100_000, count: 100_000, bytes: jsonlBytes.length, sha256: sha256(jsonlBytes) },
      { name: 'epcis.json', format: 'epcis', rows: 10, count: 100_000, bytes: epcisBytes.length, sha256: sha256(epcisBytes) },
    ]);

    // Row for row against the database, in seq order, streaming the files line by line.
    const rows = await query<{ serial: string; resolver_url: string; status: string }>(
      app.db.em.fork(),
      `select serial, resolver_url, status from ${unitsWithUrls} where brand_id = ? and mint_batch_id = ? order by seq`,
      [brand.brandId, mintBatchId],
    );
    expect(rows).toHaveLength(100_000);
    const csv = createInterface({ input: createReadStream(join(folder, 'units.csv')) });
    const jsonl = createInterface({ input: createReadStream(join(folder, 'units.jsonl')) })[Symbol.asyncIterator]();
    let i = -1;
    let mismatches = 0;
    for await (const line of csv) {
      if (i === -1) {
        expect(line).toBe(packColumns.join(','));
        i++;
        continue;
      }
      const row = rows[i]!;
      const json = JSON.parse((await jsonl.next()).value as string) as Record<string, unknown>;
      if (line !== `${row.serial},${row.resolver_url},${row.serial},,${row.status}`) mismatches++;
      if (json.serial !== row.serial || json.digital_link !== row.resolver_url || json.token !== row.serial || json.lot !== null || json.status !== row.status)
        mismatches++;
      i++;
    }
    expect(i).toBe(100_000);
    expect(mismatches).toBe(0);
    expect((await jsonl.next()).done).toBe(true);
    expect(rows[0]!.resolver_url).toBe(
      `http://127.0.0.1:8080/r/${(await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId]))[0]!.slug}/01/${brand.gtin}/21/${rows[0]!.serial}`,
    );
  });
});

describe('pack generation', () => {
  it('recovers a pack whose worker died: the lapsed lease is claimed again and the dead claim changes nothing', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 300);
    const pack = await packOf(mintBatchId);
    const dead = await claimOnly(pack.id, 50);
    expect(await packOf(mintBatchId)).toMatchObject({ status: 'generating', attempts: 1 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    const revived = await claimOnly(pack.id);
    expect(revived.attempts).toBe(2);
    expect(await generatePayloadPack(app.ctx, dead, { store })).toEqual({ kind: 'lost' });
    expect(await packOf(mintBatchId)).toMatchObject({ status: 'generating', storage_path: null });
    expect(await generatePayloadPack(app.ctx, revived, { store })).toMatchObject({ kind: 'ready', unitCount: 300 });
    expect(await batchStatus(mintBatchId)).toBe('exported');
  });

  it('releases the pack back to pending when the worker stops mid-way, and generates it fully later', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 1_000);
    const pack = await packOf(mintBatchId);
    const stop = new AbortController();
    stop.abort();
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store, signal: stop.signal })).toEqual({ kind: 'released' });
    expect(await packOf(mintBatchId)).toMatchObject({ status: 'pending', storage_path: null });
    expect(await batchStatus(mintBatchId)).toBe('minted');
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store, pageSize: 99, paging: true })).toMatchObject({
      kind: 'ready',
      unitCount: 1_000,
    });
  });

  it('writes the same bytes whether the worker reads the units as COPY streams or in keyset pages', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 2_500, { activationMode: 'first_scan' });
    await run(app.db.em.fork(), `update mint_units set status = 'active' where mint_batch_id = ? and seq % 3 = 0`, [mintBatchId]);
    // URLs holding characters JSON escapes (a backslash, a tab) or leaves as they are (non-ASCII), and a comma: a unit's
    // URL is its batch's base, GTIN and serial, so the odd characters go into the batch's resolver base.
    const odd = '/back\\slash-tab\there-caf\u00e9,\u00fc';
    await run(app.db.em.fork(), `update mint_batches set resolver_base_url = resolver_base_url || ? where id = ?`, [odd, mintBatchId]);
    const pack = await packOf(mintBatchId);
    const paged = createFsPackStore(join(storeDir.dir, 'paged'));
    const claim = await claimOnly(pack.id);
    // One clock for both, so the EPCIS document's creationDate agrees too.
    const fixed = { ...app.ctx, clock: () => new Date('2026-11-24T05:00:00.000Z') };
    expect(await generatePayloadPack(fixed, claim, { store: paged, paging: true, pageSize: 1_000 })).toMatchObject({ kind: 'ready', unitCount: 2_500 });
    await run(app.db.em.fork(), `update payload_packs set status = 'pending' where id = ?`, [pack.id]);
    expect(await generatePayloadPack(fixed, await claimOnly(pack.id), { store })).toMatchObject({ kind: 'ready', unitCount: 2_500 });
    const epcis = await readFile(join(storeDir.dir, brand.brandId, pack.id, 'epcis.json'));
    expect(epcis.equals(await readFile(join(storeDir.dir, 'paged', brand.brandId, pack.id, 'epcis.json')))).toBe(true);
    expect(epcis.toString().match(/"https?:[^"]*\/21\/[^"]*"/g)).toHaveLength(2_500);
    for (const file of ['units.csv', 'units.jsonl']) {
      const copiedBytes = await readFile(join(storeDir.dir, brand.brandId, pack.id, file));
      const pagedBytes = await readFile(join(storeDir.dir, 'paged', brand.brandId, pack.id, file));
      expect(copiedBytes.equals(pagedBytes), file).toBe(true);
      expect(
        copiedBytes
          .toString()
          .split('\n')
          .filter((l) => l.includes('inactive')),
      ).toHaveLength(2_500 - 833);
    }
    // Every JSON line is byte for byte what JSON.stringify writes for the unit.
    const units = await query<{ serial: string; resolver_url: string; status: string }>(
      app.db.em.fork(),
      `select serial, resolver_url, status from ${unitsWithUrls} where mint_batch_id = ? order by seq`,
      [mintBatchId],
    );
    expect(units.every((u) => u.resolver_url.includes(odd))).toBe(true);
    const lines = (await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.jsonl'), 'utf8')).split('\n');
    expect(lines).toEqual([
      ...units.map((u) => JSON.stringify({ serial: u.serial, digital_link: u.resolver_url, token: u.serial, lot: null, status: u.status })),
      '',
    ]);
    // units.csv quotes the URLs holding a quote or a comma (quotes doubled): here every URL, for its comma.
    const csvLines = (await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.csv'), 'utf8')).split('\n').slice(1, 6);
    const quoted = (url: string) => `"${url.replaceAll('"', '""')}"`;
    expect(csvLines).toEqual(units.slice(0, 5).map((u) => [u.serial, quoted(u.resolver_url), u.serial, '', u.status].join(',')));
  });

  it('writes every file from the units as they were when generation began, even when units are activated meanwhile', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 500, { activationMode: 'first_scan' });
    const pack = await packOf(mintBatchId);
    // A store that activates every unit of the batch (committed) while units.csv gets its first bytes.
    let activated = 0;
    const activate = async () => {
      activated = await run(app.db.em.fork(), `update mint_units set status = 'active', activated_at = now() where mint_batch_id = ? and status = 'inactive'`, [
        mintBatchId,
      ]);
    };
    const activating: PackStore = {
      ...store,
      async begin(path) {
        const inner = await store.begin(path);
        return {
          commit: () => inner.commit(),
          abort: () => inner.abort(),
          file(name) {
            const out = inner.file(name);
            if (name !== 'units.csv') return out;
            let first = true;
            return new Writable({
              highWaterMark: 1,
              write(chunk, _encoding, done) {
                (first ? activate() : Promise.resolve()).then(() => {
                  first = false;
                  if (out.write(chunk)) done();
                  else out.once('drain', () => done());
                }, done);
              },
              final(done) {
                out.end();
                finished(out).then(() => done(), done);
              },
            });
          },
        };
      },
    };
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store: activating })).toMatchObject({ kind: 'ready', unitCount: 500 });
    expect(activated).toBe(500);
    const folder = join(storeDir.dir, brand.brandId, pack.id);
    const csv = (await readFile(join(folder, 'units.csv'), 'utf8')).trim().split('\n').slice(1);
    const jsonl = (await readFile(join(folder, 'units.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string });
    expect(new Set(csv.map((line) => line.split(',')[4]))).toEqual(new Set(['inactive']));
    expect(new Set(jsonl.map((l) => l.status))).toEqual(new Set(['inactive']));
    expect(csv).toHaveLength(500);
    expect(jsonl).toHaveLength(500);
  });

  it('puts the pack back to pending after a store error, claimable again only after a backoff, and fails it after five attempts', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 20);
    const pack = await packOf(mintBatchId);
    const broken: PackStore = {
      ...store,
      begin: async () => {
        throw new Error('disk full');
      },
    };
    let now = Date.now();
    const later = { ...app.ctx, clock: () => new Date(now) };
    // Other files' packs stay claimable in this database; claim through the clock we move.
    const claimAt = async () => {
      const others: string[] = [];
      try {
        for (;;) {
          const claim = await claimPayloadPack(later);
          if (claim === null || claim.id === pack.id) return claim;
          others.push(claim.id);
        }
      } finally {
        for (const id of others) await run(app.db.em.fork(), `update payload_packs set status = 'pending', lease_expires_at = null where id = ?`, [id]);
      }
    };
    for (let attempt = 1; attempt <= 4; attempt++) {
      const claim = await claimAt();
      expect(claim?.attempts).toBe(attempt);
      expect(await generatePayloadPack(later, claim!, { store: broken })).toEqual({ kind: 'retry', reason: 'disk full' });
      expect(await packOf(mintBatchId)).toMatchObject({ status: 'pending', error: 'disk full', storage_path: null });
      expect(await claimAt()).toBeNull();
      now += 1_000 * 2 ** attempt;
    }
    const last = await claimAt();
    expect(await generatePayloadPack(later, last!, { store: broken })).toEqual({ kind: 'failed', reason: 'attempts exhausted: disk full' });
    expect(await packOf(mintBatchId)).toMatchObject({ status: 'failed', attempts: 5 });
    expect(await batchStatus(mintBatchId)).toBe('minted');
  });

  it('fails the pack of a voided batch with a payload_pack_failed event', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 10);
    await setMintBatchStatus(app.ctx, { id: brand.userId }, { brandId: brand.brandId, mintBatchId, status: 'voided', reason: 'recall' });
    const pack = await packOf(mintBatchId);
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store })).toEqual({ kind: 'failed', reason: 'mint batch voided' });
    expect(await packOf(mintBatchId)).toMatchObject({ status: 'failed', storage_path: null, error: 'mint batch voided' });
    const events = (
      await listMintEvents(app.ctx, brand.brandId, { limit: 10, cursor: null, eventType: 'payload_pack_failed', entityType: null, entityId: null })
    ).items;
    expect(events).toHaveLength(1);
  });

  it('lets two workers claim different packs, never the same one', async () => {
    const brand = await app.seedBrand();
    await mintCompleted(app.ctx, brand, 5);
    await mintCompleted(app.ctx, brand, 5);
    const claims = await Promise.all([claimPayloadPack(app.ctx), claimPayloadPack(app.ctx), claimPayloadPack(app.ctx)]);
    const ids = claims.filter((c) => c !== null).map((c) => c.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) await run(app.db.em.fork(), `update payload_packs set status = 'pending', lease_expires_at = null where id = ?`, [id]);
  });

  it('writes one row per lot for a lot batch', async () => {
    const brand = await app.seedBrand();
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 30, {
      identityMode: 'batch',
      lots: [
        { lotCode: 'L-1', qty: 10 },
        { lotCode: 'L,2', qty: 20 },
      ],
    });
    const pack = await packOf(mintBatchId);
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store })).toMatchObject({ kind: 'ready', unitCount: 2 });
    const csv = await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.csv'), 'utf8');
    const [{ slug }] = (await query<{ slug: string }>(app.db.em.fork(), 'select slug from brands where id = ?', [brand.brandId])) as [{ slug: string }];
    // Lots in lot-code order; a comma in a lot code is quoted, and percent-encoded in its URI.
    expect(csv).toBe(`serial,digital_link,token,lot,status
,http://127.0.0.1:8080/r/${slug}/01/${brand.gtin}/10/L%2C2,,"L,2",active
,http://127.0.0.1:8080/r/${slug}/01/${brand.gtin}/10/L-1,,L-1,active
`);
    const jsonl = (await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl.map((l) => [l.lot, l.qty])).toEqual([
      ['L,2', 20],
      ['L-1', 10],
    ]);
  });
  it('neutralises lot codes a spreadsheet would run as formulas in units.csv (a leading quote); units.jsonl keeps them as they are', async () => {
    const brand = await app.seedBrand();
    const lots = [
      { lotCode: '=HYPERLINK(1)', qty: 1 },
      { lotCode: '+A1', qty: 1 },
      { lotCode: '-2', qty: 1 },
      { lotCode: 'A=1', qty: 1 },
    ];
    const { mintBatchId } = await mintCompleted(app.ctx, brand, 4, { identityMode: 'batch', lots });
    const pack = await packOf(mintBatchId);
    expect(await generatePayloadPack(app.ctx, await claimOnly(pack.id), { store })).toMatchObject({ kind: 'ready', unitCount: 4 });
    const csv = await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.csv'), 'utf8');
    const lotColumn = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[3]);
    expect(lotColumn.sort()).toEqual([`'+A1`, `'-2`, `'=HYPERLINK(1)`, 'A=1']);
    const jsonl = (await readFile(join(storeDir.dir, brand.brandId, pack.id, 'units.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl.map((l) => l.lot).sort()).toEqual(['+A1', '-2', '=HYPERLINK(1)', 'A=1']);
  });
});
