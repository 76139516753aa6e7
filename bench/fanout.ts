// `npm run bench:fanout`: what a brand's webhook endpoints cost its writers. A writer's statement
// inserts the event and, when an enabled endpoint of its brand wants it, one webhook_fanouts marker
// (appendEvents); the deliveries (one per endpoint, at most WEBHOOK_MAX_ENDPOINTS_PER_BRAND: default
// 20, at most 1,000) are written afterwards by the webhook worker's fan-out (fanOutWebhookEvents),
// so a write should cost the same whatever the brand's endpoints. Creates a scratch database with
// three brands: no endpoint (the baseline), 20 endpoints (the default limit) and 1,000 (the
// setting's maximum), then times UpsertLink (a link row and its event) BENCH_UPSERTS times per
// brand (default 200), the brands taking turns call by call so load on the machine falls on all
// alike. Then runs the fan-out until nothing waits, timed. Prints p50 and p99 per brand, their
// ratio to the baseline, the deliveries each upsert got after the fan-out and the fan-out's rate,
// and drops the database.

import { performance } from 'node:perf_hooks';
import { openDatabase } from '@mint/db';
import { createUseCaseContext, createUser, createWebhookEndpoint, createWorkspace, drainWebhookFanout, upsertLink } from '@mint/usecases';
import { query } from '../test/support/sql.ts';
import { createScratchDatabase } from './scratch-database.ts';

const upserts = Number(process.env.BENCH_UPSERTS ?? 200);
const endpointCounts = [0, 20, 1_000] as const;

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const scratch = await createScratchDatabase('bench_fanout');
try {
  const db = await openDatabase({ url: scratch.url }, { poolSize: 4, applicationName: 'bench-fanout' });
  try {
    const ctx = createUseCaseContext({ db, publicBaseUrl: 'http://127.0.0.1:8080' });
    const user = await createUser(ctx, { email: 'bench@bench.example', name: 'Bench' });
    const brands: { endpoints: number; brandId: string; times: number[] }[] = [];
    for (const endpoints of endpointCounts) {
      const brand = await createWorkspace(ctx, { name: `Bench ${endpoints}` });
      for (let i = 0; i < endpoints; i++) {
        await createWebhookEndpoint(
          ctx,
          { id: user.id },
          { allowLoopback: false, maxEndpointsPerBrand: 1_000 },
          {
            brandId: brand.id,
            url: `https://receiver.example/${i}`,
            eventTypes: [],
            description: '',
          },
        );
      }
      brands.push({ endpoints, brandId: brand.id, times: [] });
    }
    console.log(`bench:fanout: ${upserts} UpsertLink calls per brand, brands with ${endpointCounts.join(', ')} webhook endpoints taking turns`);
    for (let i = 0; i < upserts; i++) {
      for (const brand of i % 2 === 0 ? brands : [...brands].reverse()) {
        const t0 = performance.now();
        await upsertLink(
          ctx,
          { id: user.id },
          {
            brandId: brand.brandId,
            gtin: null,
            lot: null,
            serial: null,
            linkType: 'gs1:pip',
            href: `https://example.com/p/${i}`,
            title: `Passport ${i}`,
            hreflang: [],
            mediaType: null,
            context: [],
            fwqs: true,
            isDefault: false,
          },
        );
        brand.times.push(performance.now() - t0);
      }
    }
    const f0 = performance.now();
    const fanout = await drainWebhookFanout(ctx);
    const fanoutMs = performance.now() - f0;
    console.log(
      `fan-out after the writes: ${fanout.events} events, ${fanout.deliveries} deliveries in ${(fanoutMs / 1000).toFixed(1)} s` +
        ` (${Math.round(fanout.deliveries / (fanoutMs / 1000))} deliveries/s, one pass at a time)`,
    );
    const base = [...brands[0]!.times].sort((a, b) => a - b);
    for (const brand of brands) {
      const sorted = [...brand.times].sort((a, b) => a - b);
      const [{ n }] = (await query<{ n: string }>(
        db.em.fork(),
        `select count(*)::text as n from webhook_deliveries where brand_id = ? and event_type = 'resolver_link_upserted'`,
        [brand.brandId],
      )) as [{ n: string }];
      console.log(
        `${String(brand.endpoints).padStart(5)} endpoints: UpsertLink p50 ${percentile(sorted, 50).toFixed(1)} ms (${(percentile(sorted, 50) / percentile(base, 50)).toFixed(2)}x),` +
          ` p99 ${percentile(sorted, 99).toFixed(1)} ms (${(percentile(sorted, 99) / percentile(base, 99)).toFixed(2)}x); ${Number(n) / upserts} deliveries per upsert after the fan-out`,
      );
    }
  } finally {
    await db.close(true);
  }
} finally {
  await scratch.drop();
}
