import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiKeyScopes, lastOwnerRefusal, permissions, roleGrants, rolePermissions, roles, scopesGrant, type Permission, type Role } from './access.ts';

describe('the role matrix', () => {
  it('lets only owners and admins mint, as the spec requires', () => {
    expect(roles.filter((role) => roleGrants(role, 'mint:write'))).toEqual(['owner', 'admin']);
  });

  it('lets only owners and admins change the resolver links, and every role read them', () => {
    expect(roles.filter((role) => roleGrants(role, 'links:write'))).toEqual(['owner', 'admin']);
    expect(roles.filter((role) => roleGrants(role, 'links:read'))).toEqual(['owner', 'admin', 'member', 'viewer']);
  });

  it('orders roles strongest first: each grants everything the next one does', () => {
    for (let i = 1; i < roles.length; i++) {
      for (const permission of rolePermissions[roles[i]!])
        expect(roleGrants(roles[i - 1]!, permission), `${roles[i - 1]} ⊇ ${roles[i]}: ${permission}`).toBe(true);
    }
    expect(permissions.filter((p) => roleGrants('viewer', p))).toEqual(['mint:read', 'products:read', 'links:read', 'scans:read']);
    expect(roles.filter((role) => roleGrants(role, 'workspace:admin'))).toEqual(['owner']);
  });

  it('never lets an API key administer the workspace, and a key grants only its scopes', () => {
    expect(scopesGrant([...permissions], 'workspace:admin')).toBe(false);
    expect(scopesGrant(['mint:read'], 'mint:read')).toBe(true);
    expect(scopesGrant(['mint:read'], 'mint:write')).toBe(false);
    expect(apiKeyScopes).not.toContain('workspace:admin');
  });

  it('is the table documented in docs/reference/access.md', () => {
    const doc = readFileSync(new URL('../../../docs/reference/access.md', import.meta.url), 'utf8');
    const header = doc.split('\n').find((line) => line.startsWith('| Permission |'))!;
    const columns = header
      .split('|')
      .map((c) => c.trim())
      .slice(3, -1) as Role[];
    expect(columns).toEqual([...roles]);
    const documented = new Map<Permission, Role[]>();
    for (const line of doc.split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      const permission = /^`(.+)`$/.exec(cells[1] ?? '')?.[1] as Permission | undefined;
      if (permission === undefined || !permissions.includes(permission) || cells.length !== columns.length + 4) continue;
      documented.set(
        permission,
        columns.filter((_, i) => cells[i + 3] === '✓'),
      );
    }
    expect(new Map(permissions.map((p) => [p, roles.filter((role) => roleGrants(role, p))]))).toEqual(documented);
  });
});

describe('the last owner of a brand', () => {
  it('can be neither demoted nor removed while no other owner exists', () => {
    expect(lastOwnerRefusal('owner', 'admin', 1)).toBe("the brand's last owner cannot become admin: make another member owner first");
    expect(lastOwnerRefusal('owner', null, 1)).toBe("the brand's last owner cannot be removed: make another member owner first");
  });

  it('can once another owner exists; other members move freely', () => {
    expect(lastOwnerRefusal('owner', 'viewer', 2)).toBeNull();
    expect(lastOwnerRefusal('owner', null, 2)).toBeNull();
    expect(lastOwnerRefusal('owner', 'owner', 1)).toBeNull();
    expect(lastOwnerRefusal('admin', null, 1)).toBeNull();
    expect(lastOwnerRefusal('viewer', 'owner', 0)).toBeNull();
  });
});
