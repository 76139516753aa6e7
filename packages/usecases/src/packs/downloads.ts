import type { Readable } from 'node:stream';
import { findPack, unitOfWork } from '@mint/db';
import {
  IllegalStateError,
  InvalidInputError,
  NotFoundError,
  canDownloadPack,
  defaultDownloadTtlSeconds,
  downloadExpiry,
  isUuid,
  maxDownloadTtlSeconds,
  signDownload,
  verifyDownload,
  type DownloadRefusal,
  type SigningKey,
} from '@mint/domain';
import { isStoreNotFoundError, tarSize, tarStream, type ByteRange, type PackStore, type TarEntry } from '@mint/store';
import type { UseCaseContext } from '../context.ts';
import { packFiles } from './pack-export.ts';

/** What signed downloads need besides the context. */
export interface DownloadSettings {
  /** Active keys: the first signs, all verify. */
  readonly keys: readonly SigningKey[];
  readonly store: PackStore;
}

/** Where download URLs live: `/downloads/{brand_id}/{pack_id}/{file}`. */
export const downloadPrefix = '/downloads/';
/** The method a download URL is signed for. */
const downloadMethod = 'GET';

/** The path of a pack's download: a tar of manifest.json, SHA256SUMS and every data file the manifest lists. */
export function packDownloadPath(brandId: string, packId: string): string {
  return `${downloadPrefix}${brandId}/${packId}/payload-pack-${packId}.tar`;
}

/** Parses a download path into brand and pack; null when it is not one. */
export function parseDownloadPath(path: string): { brandId: string; packId: string } | null {
  if (!path.startsWith(downloadPrefix)) return null;
  const [brandId = '', packId = '', file, ...rest] = path.slice(downloadPrefix.length).split('/');
  if (rest.length > 0 || !isUuid(brandId) || !isUuid(packId) || file !== `payload-pack-${packId}.tar`) return null;
  return { brandId, packId };
}

/** A signed URL and when it stops working. */
export interface DownloadUrl {
  readonly url: string;
  readonly expiresAt: Date;
}

/**
 * Issues a signed URL for a ready pack of the brand, valid `ttlSeconds` (1..900, default 300):
 * `{PUBLIC_BASE_URL}/downloads/{brand}/{pack}/payload-pack-{pack}.tar?exp=..&kid=..&sig=..`.
 * A missing or foreign pack is NotFoundError; a pack without storage path (pending, generating,
 * failed) is IllegalStateError. The caller's permission on the brand is checked by the transport.
 */
export async function createPayloadPackDownloadUrl(
  ctx: UseCaseContext,
  settings: DownloadSettings,
  input: { readonly brandId: string; readonly packId: string; readonly ttlSeconds: number | null },
): Promise<DownloadUrl> {
  const ttl = input.ttlSeconds ?? defaultDownloadTtlSeconds;
  const violations = [];
  if (!isUuid(input.brandId)) violations.push({ field: 'brand_id', message: 'must be a uuid' });
  if (!isUuid(input.packId)) violations.push({ field: 'pack_id', message: 'must be a uuid' });
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > maxDownloadTtlSeconds) {
    violations.push({ field: 'ttl_seconds', message: `must be between 1 and ${maxDownloadTtlSeconds}` });
  }
  if (violations.length > 0) throw new InvalidInputError(violations);
  const pack = await findPack(unitOfWork(ctx.db), input.brandId, input.packId);
  if (pack === null) throw new NotFoundError(`payload pack ${input.packId} not found`);
  if (!canDownloadPack(pack.status, pack.storagePath)) {
    throw new IllegalStateError(`payload pack ${input.packId} is ${pack.status}: a download URL needs a ready pack`);
  }
  const path = packDownloadPath(input.brandId, input.packId);
  const now = ctx.clock();
  const expires = downloadExpiry(now, ttl);
  const signature = signDownload(settings.keys, { method: downloadMethod, brandId: input.brandId, packId: input.packId, path, expires });
  const query = new URLSearchParams({ exp: String(signature.exp), kid: signature.kid, sig: signature.sig });
  return { url: `${ctx.publicBaseUrl}${path}?${query.toString()}`, expiresAt: new Date(expires * 1000) };
}

/** The answer to a download request. */
export type DownloadAnswer =
  /** Expired, tampered, unknown key or malformed: every case answers the same 403. */
  | { readonly kind: 'refused'; readonly reason: DownloadRefusal }
  /** Signed correctly but the pack or its files are gone. */
  | { readonly kind: 'missing' }
  | {
      readonly kind: 'file';
      readonly fileName: string;
      readonly size: number;
      /** Changes whenever the pack is written again, so a resumed download (If-Range) never mixes two packs. */
      readonly etag: string;
      readonly lastModified: Date;
      /** The archive, or only bytes `range` of it (within `size`), streamed from the store. */
      readonly stream: (range?: ByteRange) => Readable;
    };

/**
 * Checks a download request (method, path and its exp/kid/sig query values) at the context's
 * clock, and opens the pack's archive when the signature holds. A path that is not a download
 * path is refused like a bad signature.
 */
export async function openPayloadPackDownload(
  ctx: UseCaseContext,
  settings: DownloadSettings,
  request: { readonly method: string; readonly path: string; readonly exp: string | null; readonly kid: string | null; readonly sig: string | null },
): Promise<DownloadAnswer> {
  const target = parseDownloadPath(request.path);
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const refusal = verifyDownload(
    settings.keys,
    { method, brandId: target?.brandId ?? '', packId: target?.packId ?? '', path: request.path },
    { exp: request.exp, kid: request.kid, sig: request.sig },
    ctx.clock(),
  );
  if (refusal !== null) return { kind: 'refused', reason: refusal };
  if (target === null || method !== downloadMethod) return { kind: 'refused', reason: 'malformed' };
  const pack = await findPack(unitOfWork(ctx.db), target.brandId, target.packId);
  if (pack === null || pack.storagePath === null || !canDownloadPack(pack.status, pack.storagePath)) return { kind: 'missing' };
  try {
    // The manifest names the pack's data files (it is a few hundred bytes); SHA256SUMS is absent in packs made before it existed.
    const manifest = await settings.store.open(pack.storagePath, packFiles.manifest);
    const chunks: Buffer[] = [];
    for await (const chunk of manifest.stream()) chunks.push(chunk as Buffer);
    const listed = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { files: { name: string }[] }).files.map((f) => f.name);
    const entries: TarEntry[] = [{ name: packFiles.manifest, file: manifest, mtime: pack.updatedAt }];
    const sums = await settings.store.open(pack.storagePath, packFiles.checksums).catch((error: unknown) => {
      if (isStoreNotFoundError(error)) return null;
      throw error;
    });
    if (sums !== null) entries.push({ name: packFiles.checksums, file: sums, mtime: pack.updatedAt });
    for (const name of listed) entries.push({ name, file: await settings.store.open(pack.storagePath, name), mtime: pack.updatedAt });
    return {
      kind: 'file',
      fileName: `payload-pack-${pack.id}.tar`,
      size: tarSize(entries),
      etag: `"${pack.id}-${pack.updatedAt.getTime()}"`,
      lastModified: pack.updatedAt,
      stream: (range) => tarStream(entries, range),
    };
  } catch (error) {
    if (isStoreNotFoundError(error)) return { kind: 'missing' };
    throw error;
  }
}
