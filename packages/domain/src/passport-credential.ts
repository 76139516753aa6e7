/**
 * A passport as a UNTP Digital Product Passport: a W3C Verifiable Credential 2.0 whose subject is
 * the item, lot or model, built from the content a reader may see (restricted sections only in
 * a credential for their class's holder). Pure: the issuer, ids and times are passed in.
 */
import { gzipSync } from 'node:zlib';
import { localText, type PassportContent, type PassportLevel, type PassportLink } from './passport.ts';
import type { ResolverKey } from './resolution.ts';

/** The W3C VC 2.0 context and UNTP DPP's working context, the first two of every passport credential. */
export const passportCredentialContexts = ['https://www.w3.org/ns/credentials/v2', 'https://test.uncefact.org/vocabulary/untp/dpp/working/'] as const;

/** What a credential says besides the passport's content. */
export interface PassportCredentialInput {
  /** The credential's id (the version's own URL). */
  readonly id: string;
  /** The issuer: a `did:web` of the resolver's host, and the brand's name. */
  readonly issuer: { readonly id: string; readonly name: string };
  /** The item's Digital Link (the subject's product id). */
  readonly subject: string;
  /** Product name. */
  readonly name: string;
  readonly gtin: string | null;
  readonly lot: string | null;
  readonly serial: string | null;
  /** The level asked for: item (a unit), batch (a lot) or model. */
  readonly level: PassportLevel;
  readonly content: PassportContent;
  /** The version's publication: the credential's validFrom. */
  readonly validFrom: Date;
  /** The languages to write the brand's texts in, preferred first. */
  readonly languages: readonly string[];
  /** The credential's status entry (Bitstring Status List), when it has one. */
  readonly status?: Record<string, unknown> | null;
  /** Base IRI of the service's own terms (extensions without a term of their own, the footprint's method). */
  readonly vocabulary: string;
}

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The UNTP DPP credential (unsigned) of a passport. */
export function passportCredential(input: PassportCredentialInput): Record<string, unknown> {
  const c = input.content;
  const text = (v: Readonly<Record<string, string>>) => localText(v, input.languages).text;
  const link = (l: PassportLink, fallback: string) => ({ type: ['Link'], linkURL: l.url, linkName: l.name === undefined ? fallback : text(l.name) });
  const characteristics: Record<string, unknown> = { type: ['Characteristics'] };
  if (c.emissions !== undefined) characteristics[`${input.vocabulary}carbonFootprintMethod`] = c.emissions.method;
  for (const e of c.extensions ?? []) characteristics[e.term] = e.unit === undefined ? e.value : { value: e.value, unit: e.unit };
  const product: Record<string, unknown> = {
    type: ['Product'],
    id: input.subject,
    name: input.name,
    ...(input.gtin === null
      ? {}
      : {
          registeredId: input.gtin,
          idScheme: { type: ['IdentifierScheme'], id: 'https://id.gs1.org/01/', name: 'Global Trade Identification Number (GTIN)' },
        }),
    ...(input.lot === null ? {} : { batchNumber: input.lot }),
    ...(input.serial === null ? {} : { serialNumber: input.serial }),
    ...(c.description === undefined ? {} : { description: text(c.description) }),
    ...(c.manufacturer?.id === undefined ? {} : { producedByParty: { id: c.manufacturer.id, name: c.manufacturer.name } }),
    ...(c.facility?.id === undefined ? {} : { producedAtFacility: { id: c.facility.id, name: c.facility.name } }),
    ...(c.productionDate === undefined ? {} : { productionDate: c.productionDate }),
    ...(c.countryOfProduction === undefined ? {} : { countryOfProduction: c.countryOfProduction }),
    ...(c.dimensions === undefined
      ? {}
      : {
          dimensions: {
            type: ['Dimension'],
            ...Object.fromEntries(Object.entries(c.dimensions).map(([k, m]) => [k, { type: ['Measure'], value: m.value, unit: m.unit }])),
          },
        }),
    ...(Object.keys(characteristics).length > 1 ? { characteristics } : {}),
  };
  const due = (c.dueDiligence ?? []).find((d) => d.link !== undefined);
  const circ = c.circularity;
  const subject: Record<string, unknown> = {
    type: ['ProductPassport'],
    id: input.subject,
    product,
    granularityLevel: input.level === 'unit' ? 'item' : input.level === 'lot' ? 'batch' : 'model',
    ...(c.conformity === undefined
      ? {}
      : {
          conformityClaim: c.conformity.map((x, i) => ({
            type: ['Claim', 'Declaration'],
            id: `${input.id}#claim-${i + 1}`,
            description: text(x.description),
            conformityTopic: x.topic ?? 'governance.compliance',
            ...(x.certificate === undefined
              ? {}
              : {
                  conformityEvidence: {
                    type: ['SecureLink', 'Link'],
                    linkURL: x.certificate.url,
                    linkName: x.certificate.name === undefined ? 'Certificate' : text(x.certificate.name),
                  },
                }),
          })),
        }),
    ...(c.emissions === undefined
      ? {}
      : {
          emissionsScorecard: {
            type: ['EmissionsPerformance'],
            carbonFootprint: c.emissions.carbonFootprint,
            declaredUnit: c.emissions.declaredUnit,
            operationalScope: c.emissions.operationalScope ?? 'None',
            primarySourcedRatio: c.emissions.primarySourcedRatio ?? 0,
          },
        }),
    ...(circ === undefined
      ? {}
      : {
          circularityScorecard: {
            type: ['CircularityPerformance'],
            ...(circ.recyclingInstructions === undefined ? {} : { recyclingInformation: link(circ.recyclingInstructions, 'Recycling instructions') }),
            ...(circ.repairInstructions === undefined ? {} : { repairInformation: link(circ.repairInstructions, 'Repair instructions') }),
            ...(circ.recyclableContent === undefined ? {} : { recyclableContent: circ.recyclableContent }),
            ...(circ.recycledContent === undefined ? {} : { recycledContent: circ.recycledContent }),
          },
        }),
    ...(due === undefined ? {} : { dueDiligenceDeclaration: { type: ['Link'], linkURL: due.link!.url, linkName: text(due.statement) } }),
    ...(c.materials === undefined
      ? {}
      : {
          materialsProvenance: c.materials.map((m) => ({
            type: ['Material'],
            name: text(m.name),
            ...(m.originCountry === undefined ? {} : { originCountry: m.originCountry }),
            ...(m.massFraction === undefined ? {} : { massFraction: m.massFraction }),
            ...(m.recycledMassFraction === undefined ? {} : { recycledMassFraction: m.recycledMassFraction }),
            ...(m.hazardous === undefined ? {} : { hazardous: m.hazardous }),
          })),
        }),
  };
  return {
    '@context': [...passportCredentialContexts],
    type: ['DigitalProductPassport', 'VerifiableCredential'],
    id: input.id,
    issuer: { type: ['CredentialIssuer'], id: input.issuer.id, name: input.issuer.name },
    validFrom: iso(input.validFrom),
    ...(input.status == null ? {} : { credentialStatus: input.status }),
    credentialSubject: subject,
  };
}

/** Where a brand's passport status list is served below an issuer's origin: `{origin}/.well-known/passport-status/{brand slug}`. */
export const passportStatusPath = '/.well-known/passport-status/';
/** The URL of a brand's status list credential under an issuer's origin (`https://host[:port]`). */
export const passportStatusListUrl = (origin: string, slug: string): string => `${origin}${passportStatusPath}${slug}`;

/** What {@link identityPassportCredential} needs of a published passport version. */
export interface IdentityPassportInput {
  /** The resolver key of the identity asked for (its GTIN, lot and serial or token). */
  readonly key: ResolverKey;
  /** The identity's URI under the host that answers (its linkset anchor); its host is the issuer's did:web. */
  readonly anchor: string;
  /** Product name. */
  readonly title: string;
  /** The brand (its name is the issuer's, its slug names its status list); null: no status entry. */
  readonly brand: { readonly name: string; readonly slug: string } | null;
  /** The content the reader may see (restricted sections only for a holder of their class). */
  readonly content: PassportContent;
  /** The version's number, publication time and status list index. */
  readonly version: number;
  readonly publishedAt: Date;
  readonly statusIndex: number;
  /** The reader's languages, preferred first (none: the brand's own order). */
  readonly languages: readonly string[];
}

/**
 * The UNTP DPP credential (unsigned) of an identity's published passport as the resolver serves
 * it at `anchor`: its id the version's own URL (`{anchor}?passportVersion=N`), issued by the
 * did:web of the anchor's host (the service's host or a brand domain, each its own issuer), the
 * subject's level from the key (a unit: item, a lot: batch, a GTIN: model), and its entry in the
 * brand's status list under that host. The same inputs give the same bytes, which is what lets a
 * signature be kept per version, reader's sections, language and host.
 */
export function identityPassportCredential(input: IdentityPassportInput): Record<string, unknown> {
  const { key } = input;
  const origin = new URL(input.anchor);
  return passportCredential({
    id: `${input.anchor}?passportVersion=${input.version}`,
    issuer: { id: didWebOf(origin.host), name: input.brand?.name ?? '' },
    subject: input.anchor,
    name: input.title,
    gtin: key.kind === 'token' ? null : key.gtin,
    lot: key.kind === 'lot' ? key.lot : key.kind === 'serial' ? (key.lot ?? null) : null,
    serial: key.kind === 'serial' ? key.serial : key.kind === 'token' ? key.token : null,
    level: key.kind === 'serial' || key.kind === 'token' ? 'unit' : key.kind === 'lot' ? 'lot' : 'model',
    content: input.content,
    validFrom: input.publishedAt,
    languages: input.languages,
    vocabulary: `${origin.origin}/ns/passport#`,
    status: input.brand === null ? null : statusListEntry(passportStatusListUrl(origin.origin, input.brand.slug), input.statusIndex),
  });
}

/** The issuer (a did:web) of a credential built by {@link passportCredential}. */
export function credentialIssuerOf(credential: Record<string, unknown>): string {
  return (credential['issuer'] as { readonly id: string }).id;
}

/** The `did:web` of a host (a port's colon percent-encoded, as did:web requires). */
export function didWebOf(host: string): string {
  return `did:web:${host.replace(/:/g, '%3A')}`;
}

/** Smallest status list (W3C Bitstring Status List): 16 KiB, 131,072 entries, so a list says little about how many credentials exist. */
export const minStatusListBits = 131_072;

/**
 * The `encodedList` of a Bitstring Status List with the bits of `indexes` set: the bitstring
 * (entry 0 the most significant bit of the first byte, at least {@link minStatusListBits} long),
 * GZIP-compressed, as multibase base64url (a `u` prefix, no padding).
 */
export function encodeStatusList(indexes: readonly number[]): string {
  const bits = Math.max(minStatusListBits, Math.ceil((Math.max(-1, ...indexes) + 1) / 8) * 8);
  const bytes = new Uint8Array(bits / 8);
  for (const i of indexes) bytes[i >> 3]! |= 0x80 >> (i & 7);
  return `u${gzipSync(bytes).toString('base64url')}`;
}

/** The credential of a brand's status list (unsigned): revocation entries of its passport credentials. */
export function statusListCredential(input: {
  readonly id: string;
  readonly issuer: string;
  readonly validFrom: Date;
  readonly revoked: readonly number[];
}): Record<string, unknown> {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: input.id,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    issuer: input.issuer,
    validFrom: iso(input.validFrom),
    credentialSubject: { id: `${input.id}#list`, type: 'BitstringStatusList', statusPurpose: 'revocation', encodedList: encodeStatusList(input.revoked) },
  };
}

/** A credential's entry in its issuer's status list. */
export function statusListEntry(listUrl: string, index: number): Record<string, unknown> {
  return {
    id: `${listUrl}#${index}`,
    type: 'BitstringStatusListEntry',
    statusPurpose: 'revocation',
    statusListIndex: String(index),
    statusListCredential: listUrl,
  };
}

/** The DID document of a `did:web` issuer listing its keys (current and rotated), each a JsonWebKey usable for assertions. */
export function didDocument(did: string, keys: readonly { readonly kid: string; readonly publicJwk: Record<string, unknown> }[]): Record<string, unknown> {
  const methods = keys.map((k) => ({ id: `${did}#${k.kid}`, type: 'JsonWebKey', controller: did, publicKeyJwk: { ...k.publicJwk, kid: k.kid } }));
  return {
    '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/jwk/v1'],
    id: did,
    verificationMethod: methods,
    assertionMethod: methods.map((m) => m.id),
  };
}
