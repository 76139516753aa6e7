// Handlers that answer use-case views, encoded into each method's output message from its
// descriptor (see `messageOf`), the way connect-es builds every handler from one schema.

import type { DescMessage, DescService, MessageShape } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { decodeCursor, encodeCursor, type Cursor } from '@mint/domain';
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

/** The position of a list request from its opaque `cursor` (null for the first page). */
export const cursorOf = (cursor: string | undefined): Cursor | null => (cursor === undefined || cursor === '' ? null : decodeCursor(cursor, 'cursor'));

/** A page's items under `name`, has_more and, when there is a next page, its opaque next_cursor. */
export const pageOf = (name: string, page: { items: readonly object[]; hasMore: boolean; next: Cursor | null }): Record<string, unknown> => ({
  [name]: page.items,
  hasMore: page.hasMore,
  nextCursor: page.next === null ? undefined : encodeCursor(page.next),
});
