import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { columns } from './columns.ts';

/**
 * The draft of a product's passport at one level: the model (lot and serial ''), a lot (lot set)
 * or one unit (serial set). Edits replace its content and bump its revision (a compare-and-set
 * when the caller names the revision it read); publishing copies it into a version.
 */
export const PassportDraft = defineEntity({
  name: 'PassportDraft',
  tableName: 'passport_drafts',
  properties: {
    brandId: columns.brandId(),
    /** The product (model) the passport belongs to. */
    productId: p.uuid().primary(),
    /** Lot code of a lot's passport; '' otherwise. */
    lot: p.text().primary(),
    /** Serial of a unit's passport; '' otherwise. */
    serial: p.text().primary(),
    /** The content as the domain reads it (UNTP-aligned sections, texts per language, access classes). */
    content: p.json<Record<string, unknown>>(),
    /** 1 on creation, +1 on every edit. */
    revision: p.integer(),
    /** Who last edited it (user or API key id). */
    updatedBy: p.text(),
    updatedAt: columns.updatedAt(),
  },
});
export type PassportDraft = InferEntity<typeof PassportDraft>;

/**
 * A published, immutable version of a passport at one level: numbered from 1 per level, with the
 * SHA-256 of its RFC 8785 canonical JSON, its publisher, time and predecessor. Never updated.
 */
export const PassportVersion = defineEntity({
  name: 'PassportVersion',
  tableName: 'passport_versions',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    productId: p.uuid(),
    /** Lot code of a lot's passport; '' otherwise. */
    lot: p.text(),
    /** Serial of a unit's passport; '' otherwise. */
    serial: p.text(),
    /** 1, 2, ... per level. */
    version: p.integer(),
    /** The published content. */
    content: p.json<Record<string, unknown>>(),
    /** Lower-case hex SHA-256 of the content's canonical JSON (RFC 8785). */
    sha256: p.text(),
    /** Who published it (user or API key id). */
    publishedBy: p.text(),
    publishedAt: columns.time(),
    /** Its entry in the brand's Bitstring Status List (0, 1, ... per brand): set once a successor supersedes it. */
    statusIndex: p.integer(),
    /** The version it supersedes; null for version 1. */
    predecessorId: p.uuid().nullable(),
  },
  uniques: [
    { name: 'passport_versions_number_unique', properties: ['brandId', 'productId', 'lot', 'serial', 'version'] },
    { name: 'passport_versions_status_unique', properties: ['brandId', 'statusIndex'] },
  ],
});
export type PassportVersion = InferEntity<typeof PassportVersion>;

/**
 * A credential a brand issued for a passport access class (repairers and recyclers:
 * legitimate_interest; market surveillance: authority): `pp_<lookup>_<secret><check>`, only the
 * SHA-256 of its secret stored, expiring, revocable. Found by its lookup id across brands, so a
 * reference table on Citus, like `api_keys`.
 */
export const PassportAccessKey = defineEntity({
  name: 'PassportAccessKey',
  tableName: 'passport_access_keys',
  properties: {
    brandId: p.uuid(),
    id: columns.id(),
    /** Public lookup part of the key, unique across brands. */
    lookupId: p.text().unique(),
    /** Who it was issued to (a repairer's name). */
    name: p.text(),
    /** legitimate_interest or authority. */
    accessClass: p.text(),
    /** SHA-256 of the secret part, hex. */
    secretHash: p.text(),
    /** When it stops working. */
    expiresAt: columns.time(),
    /** When it was revoked; null while valid. */
    revokedAt: columns.time().nullable(),
    /** Who issued it. */
    createdBy: p.text(),
    createdAt: columns.createdAt(),
  },
});
export type PassportAccessKey = InferEntity<typeof PassportAccessKey>;

/**
 * A key the service signs passport credentials with (Ed25519): its public JWK, listed in every
 * issuer's did.json while the key is kept (rotated ones too, so earlier credentials still verify),
 * and its private JWK sealed at rest like webhook secrets (`WEBHOOK_SECRET_KEYS`, bound to the
 * key's id). The newest key not retired signs. A reference table on Citus: a few rows, read by all.
 */
export const PassportSigningKey = defineEntity({
  name: 'PassportSigningKey',
  tableName: 'passport_signing_keys',
  properties: {
    /** The key id (`kid`, the fragment of its verification method). */
    kid: p.text().primary(),
    /** The public key as a JWK (kty OKP, crv Ed25519, x). */
    publicJwk: p.json<Record<string, unknown>>(),
    /** The private JWK, sealed (`enc:v1:...`). */
    privateSealed: p.text(),
    createdAt: columns.createdAt(),
    /** When a newer key took over signing; null for the current key. */
    retiredAt: columns.time().nullable(),
  },
});
export type PassportSigningKey = InferEntity<typeof PassportSigningKey>;
