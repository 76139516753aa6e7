import { failProductImport, importMayStart, runProductImport, type UseCaseContext } from '@mint/usecases';
import type { Logger } from 'pino';
import type { Delivery, Outcome } from './settle.ts';

/** What the import worker needs. */
export interface ImportWorkerOptions {
  readonly ctx: UseCaseContext;
  readonly logger: Logger;
  /** Imports of one brand running at once across executors (IMPORT_CONCURRENCY_PER_BRAND); default 1. */
  readonly perBrand?: number;
}

/**
 * Runs one delivered product import: upserts its rows (see runProductImport) while telling the bus
 * it is still working, and reports the outcome. A finished or missing import is done (a duplicate
 * delivery changes nothing); a database error is retried with a short delay, since every write of
 * an import is an upsert and a rerun starts it over, and on the bus's last delivery the import is
 * marked FAILED rather than left PROCESSING. An import whose brand already has `perBrand` imports
 * running is deferred: the message is done, the import stays QUEUED, and the sweeper publishes it
 * again once it has been idle a while, so other brands' imports go first.
 */
export async function runImportJob(options: ImportWorkerOptions, msg: Delivery): Promise<Outcome> {
  const { id: importId, brandId } = msg.job;
  const log = options.logger.child({ importId, brandId, delivery: msg.deliveryCount });
  if (!(await importMayStart(options.ctx, brandId, importId, options.perBrand ?? 1))) {
    log.info('brand has as many imports running as it may; deferred until the sweeper publishes it again');
    return { kind: 'done' };
  }
  const heartbeat = setInterval(() => msg.working(), 5_000);
  try {
    const outcome = await runProductImport(options.ctx, brandId, importId);
    if (outcome.kind === 'missing') {
      log.warn('product import not found; dropping the message');
      return { kind: 'drop' };
    }
    log.info({ status: outcome.status }, 'product import finished');
    return { kind: 'done' };
  } catch (error) {
    if (msg.lastDelivery) {
      const reason = `gave up after ${msg.deliveryCount} failed attempts (details in the executor log)`;
      await failProductImport(options.ctx, brandId, importId, reason).catch((err: unknown) => log.error({ err }, 'marking the import FAILED failed'));
      log.error({ err: error }, 'product import failed');
      return { kind: 'done' };
    }
    log.warn({ err: error }, 'product import attempt failed; retrying');
    return { kind: 'retry', delayMs: 2_000 };
  } finally {
    clearInterval(heartbeat);
  }
}
