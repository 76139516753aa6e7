/**
 * The HTML pages the resolver answers a scan with, rendered from what the resolver read: an
 * identity's page and a passport's sections, in the page's languages. Pure: no I/O, nothing of
 * the transport.
 */
export {
  pageLanguages,
  pageLanguageOf,
  escapeHtml,
  identityPageBytes,
  renderIdentityPage,
  renderPassportSections,
  type PageLanguage,
  type Authenticity,
  type PageLink,
  type PageContent,
  type PagePassport,
} from './identity-page.ts';
export { resolverBodies, refusalPages, refusalJson, plainPage, type Refusal } from './refusals.ts';
