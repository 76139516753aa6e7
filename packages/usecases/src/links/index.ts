export { upsertLink, listLinks, deleteLink, replaceLinks, type LinkView } from './links.ts';
export { setBrandResolverDomain } from './brand-domains.ts';
// For the other use-case folders, not exported by the package.
export { brandViolations } from './links.ts';
