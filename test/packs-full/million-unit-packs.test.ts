// A 1,000,000-unit serial batch packed into the streamed formats (ZPL and EPCIS): the downloaded
// pack verifies with `sha256sum -c`, the EPCIS file lists every unit once in events of at most
// 10,000 EPCs. Peak RSS is printed; the bound is proven by `npm run bench:packs`. The default suite
// runs the same on 2,500 units (pack-profiles.test.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPackStore } from '@mint/store';
import { serialPackRoundTrip, tempStoreDir } from '../support/pack-fixtures.ts';
import { setupUseCases, type UseCaseBundle } from '../support/usecases.ts';

let app: UseCaseBundle;
let storeDir: { dir: string; remove(): Promise<void> };
beforeAll(async () => {
  app = await setupUseCases();
  storeDir = await tempStoreDir();
});
afterAll(async () => {
  await app.close();
  await storeDir.remove();
});

describe('a 1,000,000-unit serial batch', () => {
  it('packs into files whose downloaded manifest verifies with sha256sum -c, with every unit in the EPCIS file once', async () => {
    const brand = await app.seedBrand();
    const trip = await serialPackRoundTrip(app.ctx, brand, createFsPackStore(storeDir.dir), [{ id: 'k1', secret: new Uint8Array(32).fill(3) }], 1_000_000);
    console.log(`${trip.formats.join(' + ')}: ${trip.units} units generated in ${trip.generateSeconds.toFixed(1)} s, peak RSS ${trip.peakRssMb.toFixed(0)} MB`);
    expect(trip.check.trim().split('\n')).toEqual(trip.formats.map((f) => `${f === 'zpl' ? 'labels.zpl' : 'epcis.json'}: OK`));
    expect(trip.manifest.files.map((f) => [f.format, f.count])).toEqual(trip.formats.map((f) => [f, 1_000_000]));
  });
});
