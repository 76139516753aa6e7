// WorkspaceService handlers: a brand's API keys and members. Transport only: the use cases decide,
// the access rule (workspace:admin) was applied before these run.

import type { ServiceImpl } from '@connectrpc/connect';
import { WorkspaceService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews, pageOf, pageRequest } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the WorkspaceService handlers need. */
export type WorkspaceServiceDeps = HandlerDeps;

/** The WorkspaceService implementation. The key a CreateApiKey answers is in the response alone, never in a log line. */
export function createWorkspaceServiceHandlers(deps: WorkspaceServiceDeps): ServiceImpl<typeof WorkspaceService> {
  const { ctx, useCases } = deps;
  return fromViews(WorkspaceService, {
    async createApiKey(req, context) {
      return { ...(await useCases.createApiKeyOf(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },

    async listApiKeys(req) {
      const page = await useCases.listApiKeysOf(ctx, req.brandId, pageRequest(valuesOf(req)));
      return { ok: true, apiKeys: page.items, ...pageOf(page), apiAccessEnabled: page.apiAccessEnabled };
    },

    async revokeApiKey(req, context) {
      return { ok: true, apiKey: await useCases.revokeApiKeyOf(ctx, { id: principalOf(context).actorId }, req.brandId, req.apiKeyId) };
    },

    async listBrandMembers(req) {
      const page = await useCases.listBrandMembersOf(ctx, req.brandId, pageRequest(valuesOf(req)));
      return { ok: true, members: page.items, ...pageOf(page) };
    },

    async addBrandMember(req, context) {
      return { ...(await useCases.addBrandMember(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },

    async setBrandMemberRole(req, context) {
      return { ok: true, member: await useCases.setBrandMemberRole(ctx, { id: principalOf(context).actorId }, valuesOf(req)) };
    },

    async removeBrandMember(req, context) {
      await useCases.removeBrandMember(ctx, { id: principalOf(context).actorId }, valuesOf(req));
      return { ok: true };
    },
  });
}
