// AccountService handlers: the session user's own account (the brands a client may pick from).

import type { ServiceImpl } from '@connectrpc/connect';
import type { AccountService } from '@mint/contract';
import type { HandlerDeps } from '../context.ts';
import { authenticatedOf } from '../auth/interceptors.ts';

/** What the AccountService handlers need. */
export type AccountServiceDeps = HandlerDeps;

/** The AccountService implementation, acting for the call's verified session alone. */
export function createAccountServiceHandlers(deps: AccountServiceDeps): ServiceImpl<typeof AccountService> {
  const { ctx, useCases } = deps;
  return {
    async listMyMemberships(_req, context) {
      const { userId, memberships } = await useCases.listMyMemberships(ctx, authenticatedOf(context.values));
      return { ok: true, userId, memberships };
    },
  };
}
