// The resolver's refusals as bodies: JSON, and pages in each of the page's languages. No identity
// is named in them, so an unknown identity and another brand's get the same bytes.

import { identityPageBytes, pageLanguages, type Authenticity, type PageLanguage } from './identity-page.ts';

/** Bodies of the refusals; the same bytes for unknown and foreign identities. */
export const resolverBodies = {
  not_found: { ok: false, error: 'not_found', message: 'No product identity is registered at this address.' },
  gone: { ok: false, error: 'gone', message: 'This identity was withdrawn by the brand and no longer resolves.' },
  not_activated: {
    ok: false,
    error: 'not_activated',
    message: 'This item has not been activated yet. It resolves once the brand activates it.',
  },
  unknown_link_type: { ok: false, error: 'unknown_link_type', message: 'The linkType is not a link type of the GS1 Web Vocabulary.' },
  link_type_not_available: { ok: false, error: 'link_type_not_available', message: 'This identity has no link of the requested type.' },
  invalid_link_target: {
    ok: false,
    error: 'invalid_link_target',
    message: 'The page stored for this identity is not a valid URL, so it cannot be redirected to.',
  },
} as const;

/** A kind of refusal. */
export type Refusal = keyof typeof resolverBodies;

/** A plain page: a title and one paragraph of HTML (escaped by the caller). */
export const plainPage = (title: string, message: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>` +
  `<body><h1>${title}</h1><p>${message}</p></body></html>`;

const refusalTitles: Record<Refusal, string> = {
  not_found: 'Not found',
  gone: 'Withdrawn',
  not_activated: 'Not yet activated',
  unknown_link_type: 'Unknown link type',
  link_type_not_available: 'No such link',
  invalid_link_target: 'Invalid link target',
};
const plainBodies = Object.fromEntries(
  Object.entries(resolverBodies).map(([kind, body]) => [kind, plainPage(refusalTitles[kind as Refusal], body.message)]),
) as Record<Refusal, string>;
/** What the page says for the refusals about an identity; the others keep the plain page. */
const refusalAuthenticity: Partial<Record<Refusal, Authenticity>> = { not_found: 'not_found', gone: 'withdrawn', not_activated: 'not_activated' };

/** The refusal pages in each of the page's languages. */
export const refusalPages = Object.fromEntries(
  pageLanguages.map((lng) => [
    lng,
    Object.fromEntries(
      Object.keys(resolverBodies).map((kind) => {
        const authenticity = refusalAuthenticity[kind as Refusal];
        return [
          kind,
          authenticity === undefined
            ? plainBodies[kind as Refusal]
            : identityPageBytes({ authenticity, brand: null, product: null, gtin: null, lot: null, serial: null, links: [] }, lng),
        ];
      }),
    ),
  ]),
) as Record<PageLanguage, Record<Refusal, string | Buffer>>;

/** The refusals' JSON bodies as text. */
export const refusalJson = Object.fromEntries(Object.entries(resolverBodies).map(([kind, body]) => [kind, JSON.stringify(body)])) as Record<Refusal, string>;
