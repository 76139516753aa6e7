import { randomUUID } from 'node:crypto';
import { appendEvents, deleteLinkRow, listLinkRows, replaceLevelLinks, upsertLinkRow, type LinkRecord, unitOfWork, transaction } from '@mint/db';
import {
  assertValid,
  InvalidInputError,
  isUuid,
  linkScopeOf,
  linkSetViolations,
  NotFoundError,
  resolvePageSize,
  toPage,
  validateLink,
  withOneDefault,
  type Cursor,
  type FieldViolation,
  type Link,
  type LinkInput,
  type LinkLevel,
  type LinkScope,
  type Page,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';

/** A link as callers see it. */
export type LinkView = LinkRecord;

/** Input of UpsertLink: a link and its level on a brand. */
export interface LinkUpsertInput extends LinkInput {
  readonly brandId: string;
}

/** Default page size of link lists. */
export const defaultLinkPageSize = 50;

/** The level and link of an input, or InvalidInputError naming every bad field. */
function checkedLink(input: LinkInput): { scope: LinkScope; link: Link } {
  const scope = linkScopeOf(input);
  const link = validateLink(input);
  const violations = [...('violations' in scope ? scope.violations : []), ...('violations' in link ? link.violations : [])];
  assertValid(violations);
  return { scope: (scope as { scope: LinkScope }).scope, link: (link as { link: Link }).link };
}

export const brandViolations = (brandId: string): FieldViolation[] => (isUuid(brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]);

/**
 * Creates or updates the brand's link of a level with this link type and href, with an audit
 * event, in one transaction. One default per level, last writer wins: a link written with
 * `isDefault` demotes the level's previous default (concurrent writers of one level queue on the
 * level's lock, so exactly one default remains); `isDefault: false` never demotes, and a level's
 * first link is its default. Resolvers see the change within a second (NOTIFY).
 */
export async function upsertLink(ctx: UseCaseContext, actor: Actor, input: LinkUpsertInput): Promise<{ link: LinkView; created: boolean }> {
  assertValid(brandViolations(input.brandId));
  const { scope, link } = checkedLink(input);
  const now = ctx.clock();
  const result = await transaction(ctx.db, async (em) => {
    const written = await upsertLinkRow(em, input.brandId, scope, link, randomUUID(), now);
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'resolver_link_upserted',
        entityType: 'resolver_link',
        entityId: written.link.id,
        actor: actor.id,
        payload: {
          level: scope.level,
          gtin: scope.gtin,
          qualifier: scope.qualifier,
          link_type: link.linkType,
          href: link.href,
          is_default: written.link.isDefault,
          created: written.created,
        },
      },
    ]);
    return written;
  });
  return result;
}

/** Filters of ListLinks. */
export interface LinkListQuery {
  readonly level: LinkLevel | null;
  readonly gtin: string | null;
  readonly limit: number | null;
  readonly cursor: Cursor | null;
}

/** A page of the brand's links, newest first by (created_at, id), optionally of one level and GTIN. */
export async function listLinks(ctx: UseCaseContext, brandId: string, query: LinkListQuery): Promise<Page<LinkView>> {
  const size = resolvePageSize(query.limit, defaultLinkPageSize);
  let gtin: string | undefined;
  if (query.gtin !== null && query.gtin !== '') {
    const scope = linkScopeOf({ gtin: query.gtin, lot: null, serial: null });
    if ('violations' in scope) throw new InvalidInputError(scope.violations);
    gtin = scope.scope.gtin;
  }
  const found = await listLinkRows(
    unitOfWork(ctx.db),
    brandId,
    {
      ...(query.level === null ? {} : { level: query.level }),
      ...(gtin === undefined ? {} : { gtin }),
    },
    size + 1,
    query.cursor,
  );
  return toPage(found, size, (l) => ({ at: l.createdAt, id: l.id }));
}

/**
 * Deletes one of the brand's links with an audit event; when it was its level's default, the
 * level's oldest remaining link becomes the default. NotFoundError when missing or another brand's.
 */
export async function deleteLink(ctx: UseCaseContext, actor: Actor, brandId: string, linkId: string): Promise<LinkView> {
  if (!isUuid(linkId) || !isUuid(brandId)) throw new NotFoundError(`link ${linkId} not found`);
  const now = ctx.clock();
  const deleted = await transaction(ctx.db, async (em) => {
    const found = await deleteLinkRow(em, brandId, linkId, now);
    if (found === null) return null;
    await appendEvents(em, now, [
      {
        brandId,
        eventType: 'resolver_link_deleted',
        entityType: 'resolver_link',
        entityId: linkId,
        actor: actor.id,
        payload: { level: found.scope.level, gtin: found.scope.gtin, qualifier: found.scope.qualifier, link_type: found.linkType, href: found.href },
      },
    ]);
    return found;
  });
  if (deleted === null) throw new NotFoundError(`link ${linkId} not found`);
  return deleted;
}

/** Input of ReplaceLinks: a level and its new links. */
export interface ReplaceLinksInput {
  readonly brandId: string;
  readonly gtin: string | null;
  readonly lot: string | null;
  readonly serial: string | null;
  readonly links: readonly Omit<LinkInput, 'gtin' | 'lot' | 'serial'>[];
}

/**
 * Replaces a level's whole set of links in one transaction, with an audit event. Every link is
 * checked first (violations name `links[i].field`), at most one may be the default (the first is
 * when none is); bad input writes nothing. Returns the level's links after the call, oldest first.
 */
export async function replaceLinks(ctx: UseCaseContext, actor: Actor, input: ReplaceLinksInput): Promise<LinkView[]> {
  assertValid(brandViolations(input.brandId));
  const scope = linkScopeOf(input);
  const v: FieldViolation[] = 'violations' in scope ? [...scope.violations] : [];
  const links: Link[] = [];
  input.links.forEach((raw, i) => {
    const link = validateLink(raw);
    if ('violations' in link) v.push(...link.violations.map((x) => ({ field: `links[${i}].${x.field}`, message: x.message })));
    else links.push(link.link);
  });
  if (v.length === 0) v.push(...linkSetViolations(links));
  assertValid(v);
  const level = (scope as { scope: LinkScope }).scope;
  const now = ctx.clock();
  const after = await transaction(ctx.db, async (em) => {
    const replaced = await replaceLevelLinks(
      em,
      input.brandId,
      level,
      withOneDefault(links),
      links.map(() => randomUUID()),
      now,
    );
    await appendEvents(em, now, [
      {
        brandId: input.brandId,
        eventType: 'resolver_links_replaced',
        entityType: 'resolver_link',
        entityId: `${level.level}:${level.gtin}:${level.qualifier}`,
        actor: actor.id,
        payload: {
          level: level.level,
          gtin: level.gtin,
          qualifier: level.qualifier,
          before: replaced.before.length,
          after: replaced.after.length,
          links: replaced.after.map((l) => ({ link_type: l.linkType, href: l.href, is_default: l.isDefault })),
        },
      },
    ]);
    return replaced.after;
  });
  return after;
}
