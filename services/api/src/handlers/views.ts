// Handlers that answer use-case views, encoded into each method's output message from its
// descriptor (see `messageOf`), the way connect-es builds every handler from one schema.

import type { DescMessage, DescService, MessageShape } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { encodeCursor, resolveCursor, type Cursor } from '@mint/domain';
import { messageOf } from '@mint/wire';

/** A method's handler answering views: a promise of the response's view, or for a server stream an iterable of them. */
type ViewHandler<M> = M extends { methodKind: 'server_streaming'; input: infer I extends DescMessage }
  ? (req: MessageShape<I>, context: HandlerContext) => AsyncIterable<object>
  : M extends { methodKind: 'unary'; input: infer I extends DescMessage }
    ? (req: MessageShape<I>, context: HandlerContext) => Promise<object>
    : never;

/** Handlers of some of a service's methods that answer views. */
export type ViewHandlers<S extends DescService, K extends keyof S['method'] = keyof S['method']> = { [P in K]: ViewHandler<S['method'][P]> };

/** The Connect handlers of `views`: each answer (each message of a stream) encoded into its method's output message. */
export function fromViews<S extends DescService, K extends keyof S['method']>(service: S, views: ViewHandlers<S, K>): Pick<ServiceImpl<S>, K> {
  const impl: Record<string, unknown> = {};
  for (const method of service.methods) {
    const view = (views as Record<string, ((req: unknown, context: HandlerContext) => unknown) | undefined>)[method.localName];
    if (view === undefined) continue;
    impl[method.localName] =
      method.methodKind === 'server_streaming'
        ? async function* (req: unknown, context: HandlerContext) {
            for await (const item of view(req, context) as AsyncIterable<object>) yield messageOf(method.output, item);
          }
        : async (req: unknown, context: HandlerContext) => messageOf(method.output, (await view(req, context)) as object);
  }
  return impl as Pick<ServiceImpl<S>, K>;
}

/**
 * The limit and position of a list request; the position from the opaque `cursor` or, in the lists
 * that also take the two-field form, from `at` (the request's `atField`) plus `cursor_id`. Half a
 * pair or both forms at once is invalid input.
 */
export function pageRequest(
  req: { limit: number | null; cursor: string | null; cursorId?: string | null },
  at: Date | null = null,
  atField = '',
): { limit: number | null; cursor: Cursor | null } {
  return { limit: req.limit, cursor: resolveCursor({ cursor: req.cursor, at, id: req.cursorId, atField, idField: 'cursor_id' }) };
}

/** has_more and, when there is a next page, its opaque next_cursor and, in the lists with the two-field form, `<atName>` plus next_cursor_id. */
export function pageOf(page: { hasMore: boolean; next: Cursor | null }, atName?: string): Record<string, unknown> {
  if (page.next === null) return { hasMore: page.hasMore };
  const twoFields = atName === undefined ? {} : { [atName]: page.next.at, nextCursorId: page.next.id };
  return { hasMore: page.hasMore, nextCursor: encodeCursor(page.next), ...twoFields };
}
