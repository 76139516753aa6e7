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

import i18next, { type TFunction } from 'i18next';

/** The page's languages; the first is the fallback. */
export const pageLanguages = ['en', 'de', 'fr'] as const;
/** A language the page's own words are written in. */
export type PageLanguage = (typeof pageLanguages)[number];

/** What the page says about the item. */
export type Authenticity = 'genuine' | 'not_issued' | 'not_activated' | 'withdrawn' | 'not_found' | 'product' | 'recalled' | 'not_in_circulation';

const texts: Record<PageLanguage, Record<string, string>> = {
  en: {
    recalled: 'Recalled', recalled_detail: '{{brand}} has recalled this item. Do not use it; follow the brand\'s recall instructions.',
    not_in_circulation: 'Not in circulation', not_in_circulation_detail: 'This item was taken out of circulation by {{brand}}{{why}}.',
    never_commissioned_detail: 'This item has not been activated yet: {{brand}} never put it into circulation (its label has not been applied to a product yet).',
    reason_recalled: ' (recalled)', reason_destroyed: ' (destroyed)', reason_expired: ' (expired)', reason_damaged: ' (damaged)', reason_sample: ' (taken as a sample)',
    reason_consumed: ' (consumed)', reason_scrapped: ' (its label was destroyed before use)', reason_returned: ' (its number was returned unused)',
    genuine: 'Genuine', genuine_detail: 'This item was issued by {{brand}} and is in circulation.',
    not_issued: 'Not issued by this brand', not_issued_detail: '{{brand}} never issued an item with this serial number. The label may be copied or forged.',
    not_activated: 'Not yet activated', not_activated_detail: 'This item has not been activated yet. It resolves once the brand activates it.',
    withdrawn: 'Withdrawn', withdrawn_detail: 'This identity was withdrawn by the brand and is no longer in circulation.',
    not_found: 'Not found', not_found_detail: 'No product identity is registered at this address.',
    product: 'Product information', product_detail: 'This code identifies a product of {{brand}}, not an individual item.',
    gtin: 'GTIN', lot: 'Lot', serial: 'Serial number', brand: 'Brand', links: 'More about this product', no_links: 'The brand has not published a passport page for this product yet.',
    issued_by: 'Issued by', status: 'Status',
    caution: 'Reported for checking',
    caution_clone: 'Since {{since}}, scans of this code look as if it may have been copied. {{brand}} is checking it: look at the item and its label closely.',
    caution_withdrawn: 'Since {{since}}, this code has been scanned after {{brand}} withdrew it. {{brand}} is checking it.',
  },
  de: {
    recalled: 'Zurückgerufen', recalled_detail: '{{brand}} hat diesen Artikel zurückgerufen. Verwenden Sie ihn nicht; folgen Sie den Rückrufhinweisen der Marke.',
    not_in_circulation: 'Nicht im Umlauf', not_in_circulation_detail: 'Dieser Artikel wurde von {{brand}} aus dem Umlauf genommen{{why}}.',
    never_commissioned_detail: 'Dieser Artikel ist noch nicht aktiviert: {{brand}} hat ihn nie in Umlauf gebracht (sein Etikett wurde noch auf kein Produkt aufgebracht).',
    reason_recalled: ' (zurückgerufen)', reason_destroyed: ' (vernichtet)', reason_expired: ' (abgelaufen)', reason_damaged: ' (beschädigt)', reason_sample: ' (als Muster entnommen)',
    reason_consumed: ' (verbraucht)', reason_scrapped: ' (sein Etikett wurde vor der Verwendung vernichtet)', reason_returned: ' (seine Nummer wurde unbenutzt zurückgegeben)',
    genuine: 'Echt', genuine_detail: 'Dieser Artikel wurde von {{brand}} ausgegeben und ist im Umlauf.',
    not_issued: 'Nicht von dieser Marke ausgegeben', not_issued_detail: '{{brand}} hat nie einen Artikel mit dieser Seriennummer ausgegeben. Das Etikett könnte kopiert oder gefälscht sein.',
    not_activated: 'Noch nicht aktiviert', not_activated_detail: 'Dieser Artikel ist noch nicht aktiviert. Er wird aufgelöst, sobald die Marke ihn aktiviert.',
    withdrawn: 'Zurückgezogen', withdrawn_detail: 'Diese Identität wurde von der Marke zurückgezogen und ist nicht mehr im Umlauf.',
    not_found: 'Nicht gefunden', not_found_detail: 'Unter dieser Adresse ist keine Produktidentität registriert.',
    product: 'Produktinformation', product_detail: 'Dieser Code bezeichnet ein Produkt von {{brand}}, keinen einzelnen Artikel.',
    gtin: 'GTIN', lot: 'Charge', serial: 'Seriennummer', brand: 'Marke', links: 'Mehr zu diesem Produkt', no_links: 'Die Marke hat für dieses Produkt noch keine Passseite veröffentlicht.',
    issued_by: 'Ausgegeben von', status: 'Status',
    caution: 'Zur Prüfung gemeldet',
    caution_clone: 'Seit {{since}} sehen Scans dieses Codes so aus, als könnte er kopiert worden sein. {{brand}} prüft das: Sehen Sie sich Artikel und Etikett genau an.',
    caution_withdrawn: 'Seit {{since}} wird dieser Code gescannt, obwohl {{brand}} ihn zurückgezogen hat. {{brand}} prüft das.',
  },
  fr: {
    recalled: 'Rappelé', recalled_detail: "{{brand}} a rappelé cet article. Ne l'utilisez pas ; suivez les instructions de rappel de la marque.",
    not_in_circulation: 'Hors circulation', not_in_circulation_detail: 'Cet article a été retiré de la circulation par {{brand}}{{why}}.',
    never_commissioned_detail: "Cet article n'a pas encore été activé : {{brand}} ne l'a jamais mis en circulation (son étiquette n'a encore été apposée sur aucun produit).",
    reason_recalled: ' (rappelé)', reason_destroyed: ' (détruit)', reason_expired: ' (expiré)', reason_damaged: ' (endommagé)', reason_sample: ' (prélevé comme échantillon)',
    reason_consumed: ' (consommé)', reason_scrapped: ' (son étiquette a été détruite avant usage)', reason_returned: ' (son numéro a été rendu inutilisé)',
    genuine: 'Authentique', genuine_detail: 'Cet article a été émis par {{brand}} et est en circulation.',
    not_issued: 'Non émis par cette marque', not_issued_detail: "{{brand}} n'a jamais émis d'article avec ce numéro de série. L'étiquette est peut-être copiée ou contrefaite.",
    not_activated: 'Pas encore activé', not_activated_detail: "Cet article n'a pas encore été activé. Il sera résolu dès que la marque l'activera.",
    withdrawn: 'Retiré', withdrawn_detail: "Cette identité a été retirée par la marque et n'est plus en circulation.",
    not_found: 'Introuvable', not_found_detail: "Aucune identité de produit n'est enregistrée à cette adresse.",
    product: 'Informations produit', product_detail: "Ce code identifie un produit de {{brand}}, pas un article individuel.",
    gtin: 'GTIN', lot: 'Lot', serial: 'Numéro de série', brand: 'Marque', links: 'En savoir plus sur ce produit', no_links: "La marque n'a pas encore publié de page de passeport pour ce produit.",
    issued_by: 'Émis par', status: 'Statut',
    caution: 'Signalé pour vérification',
    caution_clone: "Depuis le {{since}}, les scans de ce code laissent penser qu'il a pu être copié. {{brand}} le vérifie : examinez attentivement l'article et son étiquette.",
    caution_withdrawn: 'Depuis le {{since}}, ce code est scanné alors que {{brand}} l’a retiré. {{brand}} le vérifie.',
  },
};

const i18n = i18next.createInstance();
// Resources are in memory, so initialisation is synchronous; values are escaped by the page, not by i18next.
void i18n.init({
  resources: Object.fromEntries(pageLanguages.map((lng) => [lng, { page: texts[lng] }])),
  fallbackLng: pageLanguages[0], ns: ['page'], defaultNS: 'page', initAsync: false, interpolation: { escapeValue: false },
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
  /**
   * Why a not-in-circulation item left (a public decommissioning reason, `scrapped` or `returned`;
   * none when private), or `never_commissioned` for a not-yet-activated item that was never put into circulation.
   */
  readonly why?: string | null;
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

const style = 'body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fafafa}' +
  'main{max-width:36rem;margin:0 auto;padding:1rem}header{font-size:.875rem;color:#4a4a4a;margin-bottom:.5rem}' +
  'h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 1rem;overflow-wrap:anywhere}' +
  '.status{border-radius:.75rem;padding:1rem;margin:0 0 1rem}.status h2{margin:0;font-size:1.25rem}.status p{margin:.25rem 0 0}' +
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}dt{color:#4a4a4a}dd{margin:0;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}' +
  'h2.links{font-size:1.125rem;margin:1rem 0 .5rem}ul{list-style:none;padding:0;margin:0}li{margin:0 0 .5rem}' +
  'a{display:block;padding:.75rem 1rem;border-radius:.5rem;background:#fff;border:1px solid #c4c4c4;color:#0b4f9c;text-decoration:none;overflow-wrap:anywhere}' +
  'a:focus,a:hover{outline:3px solid #0b4f9c;outline-offset:2px}' +
  '.caution{border:2px solid #8a4b00;background:#fff4e0;color:#5c3200;border-radius:.75rem;padding:1rem;margin:0 0 1rem}.caution h2{margin:0;font-size:1.125rem}.caution p{margin:.25rem 0 0}';

/** The page, as one HTML document in `language`. */
export function renderIdentityPage(content: PageContent, language: PageLanguage): string {
  const t = translators[language];
  const brand = content.brand ?? '';
  const tone = tones[content.authenticity];
  const heading = t(content.authenticity);
  const why = content.why ?? null;
  const detail = content.authenticity === 'not_activated' && why === 'never_commissioned'
    ? t('never_commissioned_detail', { brand })
    : t(`${content.authenticity}_detail`, { brand, why: why === null || why === 'never_commissioned' ? '' : t(`reason_${why}`) });
  const title = content.product ?? heading;
  const facts = [
    ...(content.brand === null ? [] : [[t('issued_by'), content.brand]]),
    ...(content.gtin === null ? [] : [[t('gtin'), content.gtin]]),
    ...(content.lot === null ? [] : [[t('lot'), content.lot]]),
    ...(content.serial === null ? [] : [[t('serial'), content.serial]]),
  ];
  const caution = content.caution == null ? '' : `<section class="caution" role="note" aria-label="${escapeHtml(t('caution'))}">` +
    `<h2><span aria-hidden="true">⚠ </span>${escapeHtml(t('caution'))}</h2>` +
    `<p>${escapeHtml(t(content.caution.reason === 'withdrawn' ? 'caution_withdrawn' : 'caution_clone', { brand, since: content.caution.since.toISOString().slice(0, 10) }))}</p></section>`;
  // A recalled item's page leads with the recall and still lists the brand's links (its recall notice among them).
  const showsLinks = content.authenticity === 'genuine' || content.authenticity === 'product' || content.authenticity === 'recalled';
  const links = !showsLinks ? '' : content.links.length === 0
    ? `<p>${escapeHtml(t('no_links'))}</p>`
    : `<h2 class="links">${escapeHtml(t('links'))}</h2><ul>${content.links.map((l) =>
      `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.title || l.linkType)}</a></li>`).join('')}</ul>`;
  return `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(content.product === null ? heading : `${content.product}: ${heading}`)}</title><style>${style}</style></head><body><main>` +
    `${content.brand === null ? '' : `<header>${escapeHtml(content.brand)}</header>`}<h1>${escapeHtml(title)}</h1>` +
    `<section class="status" style="background:${tone.band};color:${tone.ink}" aria-label="${escapeHtml(t('status'))}">` +
    `<h2><span aria-hidden="true">${tone.mark} </span>${escapeHtml(heading)}</h2><p>${escapeHtml(detail)}</p></section>${caution}` +
    `${facts.length === 0 ? '' : `<dl>${facts.map(([k, v]) => `<dt>${escapeHtml(k!)}</dt><dd>${escapeHtml(v!)}</dd>`).join('')}</dl>`}` +
    `${links}</main></body></html>`;
}
