import type { Em } from '../orm.ts';
import { query } from './sql.ts';

/**
 * The user's role on the brand, or null; one primary-key read in plain SQL, since every
 * authorized call makes it (the entity manager's findOne costs several times the query).
 */
export async function findMembershipRole(em: Em, brandId: string, userId: string): Promise<string | null> {
  const [row] = await query<{ role: string }>(em, 'select role from memberships where brand_id = ? and user_id = ?', [brandId, userId]);
  return row?.role ?? null;
}
