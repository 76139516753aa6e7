/**
 * The page a phone gets when it scans a label and no passport page of the brand's takes it
 * further: server-rendered, styled inline, no script, a few KB. It says in plain words whether
 * the item is genuine (a unit the brand issued, in circulation), not issued by this brand (a
 * serial it never minted), not yet activated or withdrawn, shows the product, its GTIN, lot and
 * serial, and lists the identity's links as actions. The page's own words come in English, German
 * and French (i18next), chosen by Accept-Language, English when none of them is asked for. A
 * unit a scan rule marked suspect gets a caution band ("Reported for checking") below its status.
 * A recalled unit's page leads with the recall; a decommissioned, scrapped or returned unit's says
 * it is not in circulation (with the reason where public); an issued or encoded unit's says it was
 * never put into circulation.
 */

import { localText, passportSections, sectionClass, type LocalText, type PassportContent, type PassportLink, type PassportSection } from '@mint/domain';
import i18next, { type TFunction } from 'i18next';

/** The page's languages; the first is the fallback. */
export const pageLanguages = ['en', 'de', 'fr'] as const;
/** A language the page's own words are written in. */
export type PageLanguage = (typeof pageLanguages)[number];

/** What the page says about the item. */
export type Authenticity = 'genuine' | 'not_issued' | 'not_activated' | 'withdrawn' | 'not_found' | 'product' | 'recalled' | 'not_in_circulation';

const texts: Record<PageLanguage, Record<string, string>> = {
  en: {
    recalled: 'Recalled',
    recalled_detail: "{{brand}} has recalled this item. Do not use it; follow the brand's recall instructions.",
    not_in_circulation: 'Not in circulation',
    not_in_circulation_detail: 'This item was taken out of circulation by {{brand}}{{why}}.',
    never_commissioned_detail:
      'This item has not been activated yet: {{brand}} never put it into circulation (its label has not been applied to a product yet).',
    reason_recalled: ' (recalled)',
    reason_destroyed: ' (destroyed)',
    reason_expired: ' (expired)',
    reason_damaged: ' (damaged)',
    reason_sample: ' (taken as a sample)',
    reason_consumed: ' (consumed)',
    reason_scrapped: ' (its label was destroyed before use)',
    reason_returned: ' (its number was returned unused)',
    genuine: 'Genuine',
    genuine_detail: 'This item was issued by {{brand}} and is in circulation.',
    not_issued: 'Not issued by this brand',
    not_issued_detail: '{{brand}} never issued an item with this serial number. The label may be copied or forged.',
    not_activated: 'Not yet activated',
    not_activated_detail: 'This item has not been activated yet. It resolves once the brand activates it.',
    withdrawn: 'Withdrawn',
    withdrawn_detail: 'This identity was withdrawn by the brand and is no longer in circulation.',
    not_found: 'Not found',
    not_found_detail: 'No product identity is registered at this address.',
    product: 'Product information',
    product_detail: 'This code identifies a product of {{brand}}, not an individual item.',
    gtin: 'GTIN',
    lot: 'Lot',
    serial: 'Serial number',
    brand: 'Brand',
    links: 'More about this product',
    no_links: 'The brand has not published a passport page for this product yet.',
    issued_by: 'Issued by',
    status: 'Status',
    caution: 'Reported for checking',
    caution_clone: 'Since {{since}}, scans of this code look as if it may have been copied. {{brand}} is checking it: look at the item and its label closely.',
    caution_withdrawn: 'Since {{since}}, this code has been scanned after {{brand}} withdrew it. {{brand}} is checking it.',
    passport: 'Product passport',
    passport_version: 'Passport version {{version}}, published {{date}}',
    passport_earlier: 'This is an earlier version; the current one is version {{latest}}.',
    passport_restricted: 'Shown to {{class}} credential holders only',
    passport_withheld: 'Some sections are shown only to authorised repairers, recyclers or authorities.',
    class_legitimate_interest: 'repairers and recyclers',
    class_authority: 'authorities',
    s_description: 'About this product',
    s_manufacturer: 'Manufacturer',
    s_facility: 'Production site',
    s_productionDate: 'Production date',
    s_countryOfProduction: 'Country of production',
    s_dimensions: 'Dimensions and weight',
    s_materials: 'Materials',
    s_emissions: 'Carbon footprint',
    s_circularity: 'Repair and recycling',
    s_conformity: 'Conformity',
    s_dueDiligence: 'Due diligence',
    s_extensions: 'More details',
    weight: 'Weight',
    length: 'Length',
    width: 'Width',
    height: 'Height',
    volume: 'Volume',
    recycled: 'recycled',
    hazardous: 'hazardous',
    method: 'Method',
    per: 'per {{unit}}',
    recyclableContent: 'Recyclable content',
    recycledContent: 'Recycled content',
    repairInstructions: 'Repair instructions',
    disassemblyInstructions: 'Disassembly instructions',
    recyclingInstructions: 'Recycling instructions',
    spareParts: 'Spare parts',
    certificate: 'Certificate',
    standard: 'Standard',
    regulation: 'Regulation',
  },
  de: {
    recalled: 'Zurückgerufen',
    recalled_detail: '{{brand}} hat diesen Artikel zurückgerufen. Verwenden Sie ihn nicht; folgen Sie den Rückrufhinweisen der Marke.',
    not_in_circulation: 'Nicht im Umlauf',
    not_in_circulation_detail: 'Dieser Artikel wurde von {{brand}} aus dem Umlauf genommen{{why}}.',
    never_commissioned_detail:
      'Dieser Artikel ist noch nicht aktiviert: {{brand}} hat ihn nie in Umlauf gebracht (sein Etikett wurde noch auf kein Produkt aufgebracht).',
    reason_recalled: ' (zurückgerufen)',
    reason_destroyed: ' (vernichtet)',
    reason_expired: ' (abgelaufen)',
    reason_damaged: ' (beschädigt)',
    reason_sample: ' (als Muster entnommen)',
    reason_consumed: ' (verbraucht)',
    reason_scrapped: ' (sein Etikett wurde vor der Verwendung vernichtet)',
    reason_returned: ' (seine Nummer wurde unbenutzt zurückgegeben)',
    genuine: 'Echt',
    genuine_detail: 'Dieser Artikel wurde von {{brand}} ausgegeben und ist im Umlauf.',
    not_issued: 'Nicht von dieser Marke ausgegeben',
    not_issued_detail: '{{brand}} hat nie einen Artikel mit dieser Seriennummer ausgegeben. Das Etikett könnte kopiert oder gefälscht sein.',
    not_activated: 'Noch nicht aktiviert',
    not_activated_detail: 'Dieser Artikel ist noch nicht aktiviert. Er wird aufgelöst, sobald die Marke ihn aktiviert.',
    withdrawn: 'Zurückgezogen',
    withdrawn_detail: 'Diese Identität wurde von der Marke zurückgezogen und ist nicht mehr im Umlauf.',
    not_found: 'Nicht gefunden',
    not_found_detail: 'Unter dieser Adresse ist keine Produktidentität registriert.',
    product: 'Produktinformation',
    product_detail: 'Dieser Code bezeichnet ein Produkt von {{brand}}, keinen einzelnen Artikel.',
    gtin: 'GTIN',
    lot: 'Charge',
    serial: 'Seriennummer',
    brand: 'Marke',
    links: 'Mehr zu diesem Produkt',
    no_links: 'Die Marke hat für dieses Produkt noch keine Passseite veröffentlicht.',
    issued_by: 'Ausgegeben von',
    status: 'Status',
    caution: 'Zur Prüfung gemeldet',
    caution_clone:
      'Seit {{since}} sehen Scans dieses Codes so aus, als könnte er kopiert worden sein. {{brand}} prüft das: Sehen Sie sich Artikel und Etikett genau an.',
    caution_withdrawn: 'Seit {{since}} wird dieser Code gescannt, obwohl {{brand}} ihn zurückgezogen hat. {{brand}} prüft das.',
    passport: 'Produktpass',
    passport_version: 'Passversion {{version}}, veröffentlicht am {{date}}',
    passport_earlier: 'Dies ist eine frühere Version; aktuell ist Version {{latest}}.',
    passport_restricted: 'Nur für Inhaber eines Nachweises für {{class}}',
    passport_withheld: 'Einige Abschnitte sind nur für berechtigte Reparaturbetriebe, Recycler oder Behörden sichtbar.',
    class_legitimate_interest: 'Reparatur und Recycling',
    class_authority: 'Behörden',
    s_description: 'Über dieses Produkt',
    s_manufacturer: 'Hersteller',
    s_facility: 'Produktionsstätte',
    s_productionDate: 'Herstellungsdatum',
    s_countryOfProduction: 'Herstellungsland',
    s_dimensions: 'Abmessungen und Gewicht',
    s_materials: 'Materialien',
    s_emissions: 'CO₂-Fußabdruck',
    s_circularity: 'Reparatur und Recycling',
    s_conformity: 'Konformität',
    s_dueDiligence: 'Sorgfaltspflichten',
    s_extensions: 'Weitere Angaben',
    weight: 'Gewicht',
    length: 'Länge',
    width: 'Breite',
    height: 'Höhe',
    volume: 'Volumen',
    recycled: 'recycelt',
    hazardous: 'gefährlich',
    method: 'Methode',
    per: 'je {{unit}}',
    recyclableContent: 'Recycelbarer Anteil',
    recycledContent: 'Recyclinganteil',
    repairInstructions: 'Reparaturanleitung',
    disassemblyInstructions: 'Demontageanleitung',
    recyclingInstructions: 'Recyclinghinweise',
    spareParts: 'Ersatzteile',
    certificate: 'Zertifikat',
    standard: 'Norm',
    regulation: 'Verordnung',
  },
  fr: {
    recalled: 'Rappelé',
    recalled_detail: "{{brand}} a rappelé cet article. Ne l'utilisez pas ; suivez les instructions de rappel de la marque.",
    not_in_circulation: 'Hors circulation',
    not_in_circulation_detail: 'Cet article a été retiré de la circulation par {{brand}}{{why}}.',
    never_commissioned_detail:
      "Cet article n'a pas encore été activé : {{brand}} ne l'a jamais mis en circulation (son étiquette n'a encore été apposée sur aucun produit).",
    reason_recalled: ' (rappelé)',
    reason_destroyed: ' (détruit)',
    reason_expired: ' (expiré)',
    reason_damaged: ' (endommagé)',
    reason_sample: ' (prélevé comme échantillon)',
    reason_consumed: ' (consommé)',
    reason_scrapped: ' (son étiquette a été détruite avant usage)',
    reason_returned: ' (son numéro a été rendu inutilisé)',
    genuine: 'Authentique',
    genuine_detail: 'Cet article a été émis par {{brand}} et est en circulation.',
    not_issued: 'Non émis par cette marque',
    not_issued_detail: "{{brand}} n'a jamais émis d'article avec ce numéro de série. L'étiquette est peut-être copiée ou contrefaite.",
    not_activated: 'Pas encore activé',
    not_activated_detail: "Cet article n'a pas encore été activé. Il sera résolu dès que la marque l'activera.",
    withdrawn: 'Retiré',
    withdrawn_detail: "Cette identité a été retirée par la marque et n'est plus en circulation.",
    not_found: 'Introuvable',
    not_found_detail: "Aucune identité de produit n'est enregistrée à cette adresse.",
    product: 'Informations produit',
    product_detail: 'Ce code identifie un produit de {{brand}}, pas un article individuel.',
    gtin: 'GTIN',
    lot: 'Lot',
    serial: 'Numéro de série',
    brand: 'Marque',
    links: 'En savoir plus sur ce produit',
    no_links: "La marque n'a pas encore publié de page de passeport pour ce produit.",
    issued_by: 'Émis par',
    status: 'Statut',
    caution: 'Signalé pour vérification',
    caution_clone:
      "Depuis le {{since}}, les scans de ce code laissent penser qu'il a pu être copié. {{brand}} le vérifie : examinez attentivement l'article et son étiquette.",
    caution_withdrawn: 'Depuis le {{since}}, ce code est scanné alors que {{brand}} l’a retiré. {{brand}} le vérifie.',
    passport: 'Passeport produit',
    passport_version: 'Version {{version}} du passeport, publiée le {{date}}',
    passport_earlier: 'Ceci est une version antérieure ; la version actuelle est la {{latest}}.',
    passport_restricted: 'Réservé aux titulaires d’une attestation {{class}}',
    passport_withheld: 'Certaines sections ne sont visibles que par les réparateurs, recycleurs ou autorités habilités.',
    class_legitimate_interest: 'réparation et recyclage',
    class_authority: 'autorités',
    s_description: 'À propos de ce produit',
    s_manufacturer: 'Fabricant',
    s_facility: 'Site de production',
    s_productionDate: 'Date de production',
    s_countryOfProduction: 'Pays de production',
    s_dimensions: 'Dimensions et poids',
    s_materials: 'Matériaux',
    s_emissions: 'Empreinte carbone',
    s_circularity: 'Réparation et recyclage',
    s_conformity: 'Conformité',
    s_dueDiligence: 'Devoir de vigilance',
    s_extensions: 'Autres informations',
    weight: 'Poids',
    length: 'Longueur',
    width: 'Largeur',
    height: 'Hauteur',
    volume: 'Volume',
    recycled: 'recyclé',
    hazardous: 'dangereux',
    method: 'Méthode',
    per: 'par {{unit}}',
    recyclableContent: 'Part recyclable',
    recycledContent: 'Part recyclée',
    repairInstructions: 'Instructions de réparation',
    disassemblyInstructions: 'Instructions de démontage',
    recyclingInstructions: 'Instructions de recyclage',
    spareParts: 'Pièces détachées',
    certificate: 'Certificat',
    standard: 'Norme',
    regulation: 'Règlement',
  },
};

const i18n = i18next.createInstance();
// Resources are in memory, so initialisation is synchronous; values are escaped by the page, not by i18next.
void i18n.init({
  resources: Object.fromEntries(pageLanguages.map((lng) => [lng, { page: texts[lng] }])),
  fallbackLng: pageLanguages[0],
  ns: ['page'],
  defaultNS: 'page',
  initAsync: false,
  interpolation: { escapeValue: false },
});
const translators = Object.fromEntries(pageLanguages.map((lng) => [lng, i18n.getFixedT(lng, 'page')])) as Record<PageLanguage, TFunction>;

/** The first of the page's languages that `languages` (Accept-Language tags, preferred first) asks for; English when none. */
export function pageLanguageOf(languages: readonly string[]): PageLanguage {
  for (const tag of languages) {
    const primary = tag.split('-', 1)[0]!.toLowerCase();
    if ((pageLanguages as readonly string[]).includes(primary)) return primary as PageLanguage;
  }
  return pageLanguages[0];
}

/** A link shown as an action. */
export interface PageLink {
  readonly href: string;
  readonly title: string;
  /** The GS1 link type's short name (pip, instructions, ...). */
  readonly linkType: string;
}

/** What the page shows. */
export interface PageContent {
  readonly authenticity: Authenticity;
  /** The brand's name; null when the brand is not known (a not-found page). */
  readonly brand: string | null;
  readonly product: string | null;
  readonly gtin: string | null;
  readonly lot: string | null;
  readonly serial: string | null;
  readonly links: readonly PageLink[];
  /** A scan rule's caution on a suspect unit (reason clone or withdrawn, since when); none when the unit is not suspect. */
  readonly caution?: { readonly reason: string; readonly since: Date } | null;
  /** The published passport the reader may see; none when the product has none. */
  readonly passport?: PagePassport | null;
  /** The brand's logo (https URL) and colour (#rrggbb) for its header; none: the plain header. */
  readonly style?: { readonly logoUrl: string | null; readonly colour: string | null } | null;
  /**
   * Why a not-in-circulation item left (a public decommissioning reason, `scrapped` or `returned`;
   * none when private), or `never_commissioned` for a not-yet-activated item that was never put into circulation.
   */
  readonly why?: string | null;
}

/** The passport a page shows. */
export interface PagePassport {
  /** The sections the reader may see (restricted ones only for a holder of their class). */
  readonly content: PassportContent;
  /** The version shown, and the latest of its level. */
  readonly version: number;
  readonly latestVersion: number;
  readonly publishedAt: Date;
  /** The reader's Accept-Language tags, preferred first, for the brand's texts. */
  readonly languages: readonly string[];
  /** True when sections were withheld from this reader. */
  readonly withheld: boolean;
  /**
   * What makes the sections' HTML the same for another request (the versions shown, the reader's
   * sections, the languages): rendered sections are kept per key; none: rendered every time.
   */
  readonly cacheKey?: string;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Colours of each authenticity: text on a tinted band, contrast at least 4.5:1. */
const tones: Record<Authenticity, { band: string; ink: string; mark: string }> = {
  genuine: { band: '#e6f4ea', ink: '#0d4f1f', mark: '✓' },
  product: { band: '#e8f0fe', ink: '#12366b', mark: 'i' },
  not_activated: { band: '#fff4e0', ink: '#6b3c00', mark: '…' },
  withdrawn: { band: '#fde8e8', ink: '#7a1111', mark: '!' },
  recalled: { band: '#fde8e8', ink: '#7a1111', mark: '!' },
  not_in_circulation: { band: '#fde8e8', ink: '#7a1111', mark: '✕' },
  not_issued: { band: '#fde8e8', ink: '#7a1111', mark: '✕' },
  not_found: { band: '#eceff1', ink: '#263238', mark: '?' },
};

const style =
  'body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fafafa}' +
  'main{max-width:36rem;margin:0 auto;padding:1rem}header{font-size:.875rem;color:#4a4a4a;margin-bottom:.5rem}' +
  'h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 1rem;overflow-wrap:anywhere}' +
  '.status{border-radius:.75rem;padding:1rem;margin:0 0 1rem}.status h2{margin:0;font-size:1.25rem}.status p{margin:.25rem 0 0}' +
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}dt{color:#4a4a4a}dd{margin:0;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}' +
  'h2.links{font-size:1.125rem;margin:1rem 0 .5rem}ul{list-style:none;padding:0;margin:0}li{margin:0 0 .5rem}' +
  'a{display:block;padding:.75rem 1rem;border-radius:.5rem;background:#fff;border:1px solid #c4c4c4;color:#0b4f9c;text-decoration:none;overflow-wrap:anywhere}' +
  'a:focus,a:hover{outline:3px solid #0b4f9c;outline-offset:2px}' +
  '.pp{background:#fff;border:1px solid #d6d6d6;border-radius:.5rem;padding:.5rem 1rem;margin:0 0 .75rem}.pp h3{font-size:1rem;margin:.25rem 0}.pp p{margin:.25rem 0}' +
  '.plain{list-style:disc;padding-left:1.25rem}.plain li{margin:0 0 .25rem}.plain a,dd a{display:inline;padding:0;border:0;background:none;text-decoration:underline}' +
  'img.logo{vertical-align:middle;margin-right:.5rem;object-fit:contain}.restricted{font-size:.875rem;color:#5c3200}.meta{font-size:.875rem;color:#4a4a4a}' +
  '.caution{border:2px solid #8a4b00;background:#fff4e0;color:#5c3200;border-radius:.75rem;padding:1rem;margin:0 0 1rem}.caution h2{margin:0;font-size:1.125rem}.caution p{margin:.25rem 0 0}';

/**
 * The brand's header: its name, after its logo when it has one (a fixed-size image, its name as
 * the text alternative), above a bar in its colour when it has one (a bar, never text, so the
 * colour cannot break the text's contrast).
 */
function brandHeader(brand: string, style: { readonly logoUrl: string | null; readonly colour: string | null } | null): string {
  const logo = style?.logoUrl == null ? '' : `<img src="${escapeHtml(style.logoUrl)}" alt="" width="40" height="40" class="logo">`;
  const bar = style?.colour == null ? '' : ` style="border-top:6px solid ${escapeHtml(style.colour)};padding-top:.5rem"`;
  return `<header${bar}>${logo}${escapeHtml(brand)}</header>`;
}

/** Stands for the serial in a kept page (no character of it is escaped). */
const serialMark = '\u0000serial\u0000';
/** Rendered pages (UTF-8) around their serial, by language and everything else they show (at most 2,000 kept). */
const renderedPages = new Map<string, readonly [Buffer, Buffer]>();

/**
 * The page, as one HTML document in `language`, UTF-8 encoded. Pages that differ only in their
 * serial share one rendering (kept by language, authenticity, brand, product, links, caution and
 * the passport's versions, sections and languages); only the serial is escaped into it per answer.
 */
export function identityPageBytes(content: PageContent, language: PageLanguage): Buffer {
  if (content.passport != null && content.passport.cacheKey === undefined) return Buffer.from(renderIdentityPage(content, language));
  const { serial, passport, ...rest } = content;
  const key = `${language} ${passport == null ? '' : passport.cacheKey} ${JSON.stringify(rest)}`;
  let parts = renderedPages.get(key);
  if (parts === undefined) {
    const html = renderIdentityPage({ ...content, serial: serial === null ? null : serialMark }, language);
    const at = html.indexOf(serialMark);
    parts = at < 0 ? [Buffer.from(html), Buffer.alloc(0)] : [Buffer.from(html.slice(0, at)), Buffer.from(html.slice(at + serialMark.length))];
    if (renderedPages.size >= 2_000) renderedPages.clear();
    renderedPages.set(key, parts);
  }
  return serial === null ? Buffer.concat(parts) : Buffer.concat([parts[0], Buffer.from(escapeHtml(serial)), parts[1]]);
}

/** The page, as one HTML document in `language`. */
export function renderIdentityPage(content: PageContent, language: PageLanguage): string {
  return renderPage(content, language);
}

function renderPage(content: PageContent, language: PageLanguage): string {
  const t = translators[language];
  const brand = content.brand ?? '';
  const tone = tones[content.authenticity];
  const heading = t(content.authenticity);
  const why = content.why ?? null;
  const detail =
    content.authenticity === 'not_activated' && why === 'never_commissioned'
      ? t('never_commissioned_detail', { brand })
      : t(`${content.authenticity}_detail`, { brand, why: why === null || why === 'never_commissioned' ? '' : t(`reason_${why}`) });
  const title = content.product ?? heading;
  const facts = [
    ...(content.brand === null ? [] : [[t('issued_by'), content.brand]]),
    ...(content.gtin === null ? [] : [[t('gtin'), content.gtin]]),
    ...(content.lot === null ? [] : [[t('lot'), content.lot]]),
    ...(content.serial === null ? [] : [[t('serial'), content.serial]]),
  ];
  const caution =
    content.caution == null
      ? ''
      : `<section class="caution" role="note" aria-label="${escapeHtml(t('caution'))}">` +
        `<h2><span aria-hidden="true">⚠ </span>${escapeHtml(t('caution'))}</h2>` +
        `<p>${escapeHtml(t(content.caution.reason === 'withdrawn' ? 'caution_withdrawn' : 'caution_clone', { brand, since: content.caution.since.toISOString().slice(0, 10) }))}</p></section>`;
  // A recalled item's page leads with the recall and still lists the brand's links (its recall notice among them).
  const showsLinks = content.authenticity === 'genuine' || content.authenticity === 'product' || content.authenticity === 'recalled';
  const links = !showsLinks
    ? ''
    : content.links.length === 0
      ? `<p>${escapeHtml(t('no_links'))}</p>`
      : `<h2 class="links">${escapeHtml(t('links'))}</h2><ul>${content.links
          .map((l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.title || l.linkType)}</a></li>`)
          .join('')}</ul>`;
  return (
    `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(content.product === null ? heading : `${content.product}: ${heading}`)}</title><style>${style}</style></head><body><main>` +
    `${content.brand === null ? '' : brandHeader(content.brand, content.style ?? null)}<h1>${escapeHtml(title)}</h1>` +
    `<section class="status" style="background:${tone.band};color:${tone.ink}" aria-label="${escapeHtml(t('status'))}">` +
    `<h2><span aria-hidden="true">${tone.mark} </span>${escapeHtml(heading)}</h2><p>${escapeHtml(detail)}</p></section>${caution}` +
    `${facts.length === 0 ? '' : `<dl>${facts.map(([k, v]) => `<dt>${escapeHtml(k!)}</dt><dd>${escapeHtml(v!)}</dd>`).join('')}</dl>`}` +
    `${links}${content.passport == null ? '' : cachedSections(content.passport, language)}</main></body></html>`
  );
}

/** Rendered passport sections by version, reader's sections and language (versions never change; at most 2,000 kept). */
const renderedSections = new Map<string, string>();
function cachedSections(p: PagePassport, language: PageLanguage): string {
  if (p.cacheKey === undefined) return renderPassportSections(p, language);
  const key = `${language} ${p.cacheKey}`;
  let html = renderedSections.get(key);
  if (html === undefined) {
    html = renderPassportSections(p, language);
    if (renderedSections.size >= 2_000) renderedSections.clear();
    renderedSections.set(key, html);
  }
  return html;
}

/** Formats a number for `language` (at most three decimals). */
const numberIn = (language: PageLanguage, n: number) => n.toLocaleString(language, { maximumFractionDigits: 3 });
const percentIn = (language: PageLanguage, n: number) => n.toLocaleString(language, { style: 'percent', maximumFractionDigits: 1 });

/**
 * The passport's sections as HTML, in the page's language for its own words and in the reader's
 * languages (with fallbacks) for the brand's texts; a text shown in another language than the
 * page's carries its own `lang`. Restricted sections shown to a holder are marked with their class.
 */
export function renderPassportSections(p: PagePassport, language: PageLanguage): string {
  const t = translators[language];
  const langs = [...p.languages, language];
  const text = (v: LocalText) => {
    const found = localText(v, langs);
    return found.lang.split('-', 1)[0] === language ? escapeHtml(found.text) : `<span lang="${escapeHtml(found.lang)}">${escapeHtml(found.text)}</span>`;
  };
  const link = (label: string, l: PassportLink) => `<li><a href="${escapeHtml(l.url)}">${l.name === undefined ? escapeHtml(label) : text(l.name)}</a></li>`;
  const dl = (pairs: readonly (readonly [string, string] | null)[]) => {
    const shown = pairs.filter((x): x is readonly [string, string] => x !== null);
    return shown.length === 0 ? '' : `<dl>${shown.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
  };
  const c = p.content;
  const body: Record<PassportSection, () => string> = {
    description: () => `<p>${text(c.description!)}</p>`,
    manufacturer: () => `<p>${escapeHtml(c.manufacturer!.name)}</p>`,
    facility: () => `<p>${escapeHtml(c.facility!.name)}${c.facility!.country === undefined ? '' : ` (${escapeHtml(c.facility!.country)})`}</p>`,
    productionDate: () => `<p>${escapeHtml(c.productionDate!)}</p>`,
    countryOfProduction: () => `<p>${escapeHtml(c.countryOfProduction!)}</p>`,
    dimensions: () =>
      dl(
        (['weight', 'length', 'width', 'height', 'volume'] as const).map((k) => {
          const m = c.dimensions![k];
          return m === undefined ? null : ([t(k), `${numberIn(language, m.value)} ${escapeHtml(m.unit)}`] as const);
        }),
      ),
    materials: () =>
      `<ul class="plain">${c
        .materials!.map(
          (m) =>
            `<li>${text(m.name)}${m.massFraction === undefined ? '' : ` ${percentIn(language, m.massFraction)}`}` +
            `${m.recycledMassFraction === undefined ? '' : `, ${percentIn(language, m.recycledMassFraction)} ${escapeHtml(t('recycled'))}`}${m.hazardous === true ? `, <strong>${escapeHtml(t('hazardous'))}</strong>` : ''}</li>`,
        )
        .join('')}</ul>`,
    emissions: () =>
      dl([
        [t('s_emissions'), `${numberIn(language, c.emissions!.carbonFootprint)} kg CO₂e ${escapeHtml(t('per', { unit: c.emissions!.declaredUnit }))}`],
        [t('method'), escapeHtml(c.emissions!.method)],
      ]),
    circularity: () => {
      const k = c.circularity!;
      const links = (['repairInstructions', 'disassemblyInstructions', 'recyclingInstructions', 'spareParts'] as const)
        .filter((n) => k[n] !== undefined)
        .map((n) => link(t(n), k[n]!))
        .join('');
      return (
        dl([
          k.recyclableContent === undefined ? null : [t('recyclableContent'), percentIn(language, k.recyclableContent)],
          k.recycledContent === undefined ? null : [t('recycledContent'), percentIn(language, k.recycledContent)],
        ]) + (links === '' ? '' : `<ul>${links}</ul>`)
      );
    },
    conformity: () =>
      `<ul class="plain">${c
        .conformity!.map(
          (x) =>
            `<li>${text(x.description)}${x.standard === undefined ? '' : ` (${escapeHtml(x.standard)})`}` +
            `${x.certificate === undefined ? '' : ` <a href="${escapeHtml(x.certificate.url)}">${escapeHtml(t('certificate'))}</a>`}</li>`,
        )
        .join('')}</ul>`,
    dueDiligence: () =>
      `<ul class="plain">${c.dueDiligence!.map((x) => `<li>${text(x.statement)}${x.link === undefined ? '' : ` <a href="${escapeHtml(x.link.url)}">${x.link.name === undefined ? escapeHtml(x.link.url) : text(x.link.name)}</a>`}</li>`).join('')}</ul>`,
    extensions: () =>
      dl(
        c.extensions!.map(
          (x) =>
            [
              localText(x.name, langs).text,
              `${typeof x.value === 'number' ? numberIn(language, x.value) : escapeHtml(String(x.value))}${x.unit === undefined ? '' : ` ${escapeHtml(x.unit === 'P1' ? '%' : x.unit)}`}`,
            ] as const,
        ),
      ),
  };
  const sections = passportSections
    .filter((s) => c[s] !== undefined)
    .map((s) => {
      const cls = sectionClass(c, s);
      const note = cls === 'public' ? '' : `<p class="restricted">${escapeHtml(t('passport_restricted', { class: t(`class_${cls}`) }))}</p>`;
      return `<section class="pp"><h3>${escapeHtml(t(`s_${s}`))}</h3>${note}${body[s]()}</section>`;
    })
    .join('');
  const date = p.publishedAt.toISOString().slice(0, 10);
  return (
    `<section aria-label="${escapeHtml(t('passport'))}"><h2 class="links">${escapeHtml(t('passport'))}</h2>${sections}` +
    `${p.withheld ? `<p class="meta">${escapeHtml(t('passport_withheld'))}</p>` : ''}` +
    `<p class="meta">${escapeHtml(t('passport_version', { version: p.version, date }))}` +
    `${p.version < p.latestVersion ? ` ${escapeHtml(t('passport_earlier', { latest: p.latestVersion }))}` : ''}</p></section>`
  );
}
