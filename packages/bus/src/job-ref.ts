import { InvalidJobError } from './errors.ts';
import { JOB_KINDS } from './job-bus.ts';
import type { JobKind, JobRef } from './job-bus.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks a JobRef before it is published and returns a clean copy (extra fields
 * dropped). Throws an InvalidJobError naming `kind`, `id` or `brandId`.
 */
export function validateJobRef(job: JobRef): JobRef {
  if (!(JOB_KINDS as readonly unknown[]).includes(job.kind)) {
    throw new InvalidJobError('kind', `kind must be one of ${JOB_KINDS.join(', ')}, got ${String(job.kind)}`);
  }
  return { kind: job.kind, id: checkUuid('id', job.id), brandId: checkUuid('brandId', job.brandId) };
}

/** The deduplication key of a job (used as Nats-Msg-Id): `${kind}:${id}`, plus `:${republish}` for a deliberate republish. */
export function jobDedupeKey(job: JobRef, republish?: string): string {
  return republish === undefined ? `${job.kind}:${job.id}` : `${job.kind}:${job.id}:${republish}`;
}

/** Encodes the wire body, JSON `{"id","brandId"}` (the kind travels as the subject). */
export function encodeJobBody(job: JobRef): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ id: job.id, brandId: job.brandId }));
}

/**
 * Decodes a wire body received on `kind`'s subject. Throws an InvalidJobError when
 * the body is not a JSON object or `id`/`brandId` is not a uuid.
 */
export function decodeJobBody(kind: JobKind, body: Uint8Array): JobRef {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch (cause) {
    throw new InvalidJobError('body', 'message body is not JSON', { cause });
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw new InvalidJobError('body', 'message body is not a JSON object');
  }
  const record = parsed as Record<string, unknown>;
  return { kind, id: checkUuid('id', record['id']), brandId: checkUuid('brandId', record['brandId']) };
}

function checkUuid(field: string, value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new InvalidJobError(field, `${field} must be a uuid`);
  }
  return value;
}
