// A fresh database with the use-case context on it, plus a seeded workspace, per test file.

import { openDatabase, type Database } from '@mint/db';
import type { MintRequest } from '@mint/domain';
import {
  createUseCaseContext,
  createUser,
  createWorkspace,
  grantRole,
  issueAccessToken,
  submitMintRequest,
  upsertProduct,
  type UseCaseContext,
} from '@mint/usecases';
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase, type FreshDatabase } from './database.ts';

/** Secret of the test contexts' session tokens. */
export const testJwtSecret = 'test-secret-test-secret-test-secret-0123';
/** `WEBHOOK_SECRET_KEYS` of the tests: the in-process context and every spawned API or executor seal and open with it. */
export const testWebhookSecretKeys = `w1:${Buffer.alloc(32, 8).toString('base64')}`;

/** A seeded brand: its owner, an ACTIVE + READY product with a GTIN, and a session token. */
export interface SeededBrand {
  readonly brandId: string;
  readonly userId: string;
  readonly productId: string;
  readonly gtin: string;
  readonly token: string;
}

/** What `setupUseCases()` returns. */
export interface UseCaseBundle {
  readonly db: Database;
  readonly ctx: UseCaseContext;
  readonly database: FreshDatabase;
  /** Creates another independent brand with an owner and a mintable product. */
  seedBrand(options?: { gtin?: string | null }): Promise<SeededBrand>;
  close(): Promise<void>;
}

let gtinCounter = 0;
/** A valid GTIN-14 that differs per call. */
export function nextGtin(): string {
  const body = `0${String(Date.now() % 1e9).padStart(9, '0')}${String(gtinCounter++ % 1000).padStart(3, '0')}`;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(body[i]) * (i % 2 === 0 ? 3 : 1);
  return body + String((10 - (sum % 10)) % 10);
}

/** Waits for `work` at most `ms`; past that, prints what the process still has open and goes on. */
async function settlesWithin(work: Promise<unknown>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), late]).finally(() => clearTimeout(timer));
  if (outcome === 'late') console.warn(`${what} took over ${ms} ms; still open: ${process.getActiveResourcesInfo().join(', ')}`);
}

/** Opens a fresh migrated database and a use-case context on it. Call in beforeAll; close() in afterAll. */
export async function setupUseCases(): Promise<UseCaseBundle> {
  const database = await freshDatabase();
  const db = await openDatabase({ url: database.url }, { poolSize: 8 });
  const ctx = createUseCaseContext({
    db,
    publicBaseUrl: 'http://127.0.0.1:8080',
    jwtSecret: testJwtSecret,
    webhookSecretKeys: [{ id: 'w1', secret: new Uint8Array(Buffer.alloc(32, 8)) }],
  });
  return {
    db,
    ctx,
    database,
    async seedBrand(options = {}) {
      const brand = await createWorkspace(ctx, { name: 'Test Brand', apiAccessEnabled: true });
      const user = await createUser(ctx, { email: `owner-${brand.slug}@test.example`, name: 'Owner' });
      await grantRole(ctx, brand.id, user.id, 'owner');
      const gtin = options.gtin === undefined ? nextGtin() : options.gtin;
      const { product } = await upsertProduct(
        ctx,
        { id: user.id },
        {
          brandId: brand.id,
          sku: 'SKU-1',
          name: 'Product One',
          gtin,
          commercialStatus: 'ACTIVE',
          mintReadinessStatus: 'READY',
          passportUrl: null,
        },
      );
      return { brandId: brand.id, userId: user.id, productId: product.id, gtin: gtin ?? '', token: await issueAccessToken(ctx, user.id) };
    },
    async close() {
      // A connection still checked out would hold the pool's end forever: after 20 s the file's
      // database is dropped anyway (which ends its sessions) and what was still open is printed.
      await settlesWithin(db.close(true), 20_000, 'closing the database pool');
      await database.drop();
    },
  };
}

/**
 * Submits a serial, active-at-mint request of `requestedQuantity` units for the seeded brand's
 * product (fields overridable) and returns the created job and batch; a blocked request throws.
 */
export async function submitSerial(ctx: UseCaseContext, brand: SeededBrand, requestedQuantity: number, overrides: Partial<MintRequest> = {}) {
  const result = await submitMintRequest(
    ctx,
    { id: brand.userId },
    {
      brandId: brand.brandId,
      productId: brand.productId,
      productBatchId: null,
      requestedQuantity,
      identityMode: 'serial',
      activationMode: 'active_at_mint',
      lots: [],
      idempotencyKey: null,
      ...overrides,
    },
  );
  if (!result.ok) throw new Error(`blocked: ${result.blockingReasons.map((r) => r.code).join(', ')}`);
  return result;
}

/**
 * The test file's use cases and first seeded brand: registers a beforeAll that opens a fresh
 * database ({@link setupUseCases}) and seeds a brand, and an afterAll that closes it (after the
 * file's own afterAll hooks, which run first). The objects returned are filled in before the file's
 * own beforeAll hooks and tests run.
 */
export function useUseCases(): { readonly app: UseCaseBundle; readonly brand: SeededBrand } {
  const app = {} as UseCaseBundle;
  const brand = {} as SeededBrand;
  beforeAll(async () => {
    Object.assign(app, await setupUseCases());
    Object.assign(brand, await app.seedBrand());
  });
  afterAll(() => app.close?.());
  return { app, brand };
}
