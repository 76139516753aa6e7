import { appendEvents, isUniqueViolation, lockBrandResolverSettings, updateBrandResolverDomain, transaction } from '@mint/db';
import {
  assertValid,
  brandDomainBaseUrl,
  brandResolverBaseUrl,
  IllegalStateError,
  isUuid,
  NotFoundError,
  resolverDomainViolations,
  type ReservedHosts,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';

/** A brand's resolver address after a change. */
export interface BrandResolverDomainView {
  /** The brand's own resolver hostname; null when it has none. */
  readonly domain: string | null;
  /** The base of the resolver URLs of units minted from now on. */
  readonly resolverBaseUrl: string;
  /** False when the brand already had this domain (nothing was written). */
  readonly changed: boolean;
}

/**
 * Sets the brand's own resolver domain, or removes it (`domain` ''), with an audit event, in one
 * transaction. Units minted afterwards carry `https://{domain}` as their resolver base (the
 * brand's `{PUBLIC_BASE_URL}/r/{slug}` again after a removal); units minted before keep their
 * URLs, and `/r/{slug}/...` keeps resolving all of them. Every API process reloads its table of
 * brand domains within a second (NOTIFY). A host the service answers on (`reserved`: control-plane
 * hosts, subdomains of the public host outside delegated zones) is refused. Bad input is InvalidArgument naming `domain`; a domain
 * another brand holds is FailedPrecondition naming it (the unique constraint decides a race).
 */
export async function setBrandResolverDomain(
  ctx: UseCaseContext,
  actor: Actor,
  input: { readonly brandId: string; readonly domain: string },
  reserved: ReservedHosts = {},
): Promise<BrandResolverDomainView> {
  assertValid([
    ...(isUuid(input.brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]),
    ...resolverDomainViolations(input.domain, new URL(ctx.publicBaseUrl).hostname, reserved),
  ]);
  const domain = input.domain === '' ? null : input.domain;
  const now = ctx.clock();
  let view: BrandResolverDomainView;
  try {
    view = await transaction(ctx.db, async (em) => {
      const before = await lockBrandResolverSettings(em, input.brandId);
      if (before === null) throw new NotFoundError('brand not found');
      const resolverBaseUrl = domain === null ? brandResolverBaseUrl(ctx.publicBaseUrl, before.slug) : brandDomainBaseUrl(domain);
      if (before.resolverDomain === domain) return { domain, resolverBaseUrl: before.resolverBaseUrl, changed: false };
      await updateBrandResolverDomain(em, input.brandId, domain, resolverBaseUrl);
      await appendEvents(em, now, [
        {
          brandId: input.brandId,
          eventType: 'brand_resolver_domain_set',
          entityType: 'brand',
          entityId: input.brandId,
          actor: actor.id,
          payload: { domain, previous: before.resolverDomain, resolver_base_url: resolverBaseUrl },
        },
      ]);
      return { domain, resolverBaseUrl, changed: true };
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new IllegalStateError(`domain: ${input.domain} is already the resolver domain of another brand`, { cause: error });
    }
    throw error;
  }
  return view;
}
