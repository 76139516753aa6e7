/**
 * Who may do what on a brand workspace. One table decides every check: a session's role on the
 * brand, or an API key's scopes, must grant the permission an operation needs.
 */

/** Role of a user on a brand workspace. */
export type Role = 'owner' | 'admin' | 'member' | 'viewer';
/** All roles, strongest first. */
export const roles: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

/** A permission an operation needs; API key scopes use the same names. */
export type Permission =
  /** Submit, preflight, process, activate, move batch statuses. */
  | 'mint:write'
  /** Read batches, units, events, KPIs and packs; download packs. */
  | 'mint:read'
  /** Create and update products and production batches; import CSV files. */
  | 'products:write'
  /** Read products and imports. */
  | 'products:read'
  /** Create, replace, delete and import the resolver's links. */
  | 'links:write'
  /** Read the resolver's links and link imports. */
  | 'links:read'
  /** Manage the brand's webhook endpoints and their deliveries. */
  | 'webhooks:write'
  /** Send scans of an edge resolver or a CDN's log shipper into the scan ledger. */
  | 'scans:write'
  /** Read the scan ledger's statistics and a unit's scans. */
  | 'scans:read'
  /** Set the brand's scan-alert rules and thresholds; clear a suspect unit. */
  | 'scans:manage'
  /** Manage the workspace itself: API keys, members and roles, API access and the brand's resolver domain. */
  | 'workspace:admin';

/** All permissions. */
export const permissions: readonly Permission[] = [
  'mint:write',
  'mint:read',
  'products:write',
  'products:read',
  'links:write',
  'links:read',
  'webhooks:write',
  'scans:write',
  'scans:read',
  'scans:manage',
  'workspace:admin',
];

/** Scopes an API key can carry (workspace administration is never delegated to a key). */
export type ApiKeyScope = Exclude<Permission, 'workspace:admin'>;
/** All API key scopes. */
export const apiKeyScopes: readonly ApiKeyScope[] = [
  'mint:write',
  'mint:read',
  'products:write',
  'products:read',
  'links:write',
  'links:read',
  'webhooks:write',
  'scans:write',
  'scans:read',
  'scans:manage',
];

/** The role matrix, documented as a table in docs/reference/access.md (a test keeps the two in step). Minting writes need owner or admin, as the spec says. */
export const rolePermissions: Readonly<Record<Role, readonly Permission[]>> = {
  owner: permissions,
  admin: [
    'mint:write',
    'mint:read',
    'products:write',
    'products:read',
    'links:write',
    'links:read',
    'webhooks:write',
    'scans:write',
    'scans:read',
    'scans:manage',
  ],
  member: ['mint:read', 'products:write', 'products:read', 'links:read', 'scans:read'],
  viewer: ['mint:read', 'products:read', 'links:read', 'scans:read'],
};

/** True when the role grants the permission. */
export function roleGrants(role: Role, permission: Permission): boolean {
  return rolePermissions[role].includes(permission);
}

/** True when the key's scopes grant the permission. */
export function scopesGrant(scopes: readonly string[], permission: Permission): boolean {
  return permission !== 'workspace:admin' && scopes.includes(permission);
}

/**
 * Why a member's role may not move from `from` to `to` (null: removed from the brand), given how
 * many owners the brand has: the last owner can be neither demoted nor removed, so a brand always
 * keeps someone who can administer it. Null when the move is allowed.
 */
export function lastOwnerRefusal(from: Role, to: Role | null, owners: number): string | null {
  if (from !== 'owner' || to === 'owner' || owners > 1) return null;
  return to === null
    ? "the brand's last owner cannot be removed: make another member owner first"
    : `the brand's last owner cannot become ${to}: make another member owner first`;
}

/** True for a role name ({@link roles}). */
export function isRole(value: string): value is Role {
  return (roles as readonly string[]).includes(value);
}
