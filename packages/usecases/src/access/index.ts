export { verifyApiKey, recordApiKeyUse, issueAccessToken, apiKeyUseIntervalMs } from './auth.ts';
export {
  authenticate,
  authorizeAuthenticated,
  authorize,
  listMyMemberships,
  type Credentials,
  type Caller,
  type Authenticated,
  type OperationAccess,
  partnerKeyRefusal,
} from './access.ts';
export { createWorkspace, createUser, grantRole, createApiKey, seedDemo, listApiKeys, revokeApiKey, setApiAccess, type DemoSeed } from './workspace.ts';
export {
  createApiKeyOf,
  listApiKeysOf,
  revokeApiKeyOf,
  listBrandMembersOf,
  addBrandMember,
  setBrandMemberRole,
  removeBrandMember,
  type ApiKeyView,
  type BrandMemberView,
} from './workspace-admin.ts';
