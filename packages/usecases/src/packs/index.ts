export { listPayloadPacks, createPayloadPack, sweepPackStore, type CreatePayloadPackInput } from './packs.ts';
export { packFormatRegistry } from './pack-formats.ts';
export { packProfileOf } from './pack-profiles.ts';
export { claimPayloadPack, generatePayloadPack, defaultPackLeaseMs, type PackManifest, type PackGenerationResult, type PackClaim } from './pack-export.ts';
export { packColumns } from './pack-rows.ts';
export { createPayloadPackDownloadUrl, openPayloadPackDownload, type DownloadSettings, downloadPrefix } from './downloads.ts';
