// Members (#/members): the brand's members with their roles, oldest first and keyset-paged; adding
// one by e-mail address (a new address makes the user) with a role; changing a role; removing a
// member after a confirmation. The API keeps the brand's last owner and says so; owner only.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { WorkspaceService, type BrandMember } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, formatTime, invalidFields, Pager, useCursorPages } from '../ui.tsx';

/** The roles, strongest first, with what each may do. */
export const roleChoices = [
  ['owner', 'owner: everything, and the workspace (keys, members, domain)'],
  ['admin', 'admin: minting, links, webhooks, scans'],
  ['member', 'member: products and passports; reads'],
  ['viewer', 'viewer: reads only'],
] as const;

const refresh = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListBrandMembers') });

/** One member's row: the role picker with its Save button, and Remove behind a confirmation. */
function MemberRow({
  member,
  onChanged,
  onError,
}: {
  readonly member: BrandMember;
  readonly onChanged: (text: string) => void;
  readonly onError: (e: unknown) => void;
}): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const [role, setRole] = useState(member.role);
  const [confirming, setConfirming] = useState(false);
  const setMemberRole = useMutation(WorkspaceService.method.setBrandMemberRole);
  const remove = useMutation(WorkspaceService.method.removeBrandMember);
  const who = member.name === '' ? member.email : member.name;
  return (
    <tr>
      <td>
        {who}
        {member.name !== member.email && <div className="hint">{member.email}</div>}
        <div className="hint user-id">
          user <code>{member.userId}</code>
        </div>
      </td>
      <td>
        <select aria-label={`Role of ${member.email}`} value={role} onChange={(e) => setRole(e.target.value)}>
          {roleChoices.map(([value]) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>{' '}
        <button
          type="button"
          className="secondary"
          disabled={role === member.role || setMemberRole.isPending}
          onClick={() =>
            setMemberRole.mutate(
              { brandId, userId: member.userId, role },
              {
                onSuccess: (r) => {
                  onChanged(`${member.email} is now ${r.member?.role ?? role}.`);
                  void refresh(queryClient);
                },
                onError: (e) => {
                  setRole(member.role);
                  onError(e);
                },
              },
            )
          }
        >
          Save role<span className="visually-hidden"> of {member.email}</span>
        </button>
      </td>
      <td data-testid="member-role">{member.role}</td>
      <td>{formatTime(member.createdAt)}</td>
      <td className="row-actions">
        {!confirming && (
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Remove<span className="visually-hidden"> {member.email}</span>
          </button>
        )}
        {confirming && (
          <>
            <button
              type="button"
              className="danger"
              disabled={remove.isPending}
              onClick={() =>
                remove.mutate(
                  { brandId, userId: member.userId },
                  {
                    onSuccess: () => {
                      onChanged(`${member.email} removed from the brand.`);
                      void refresh(queryClient);
                    },
                    onError: (e) => {
                      setConfirming(false);
                      onError(e);
                    },
                  },
                )
              }
            >
              Yes, remove<span className="visually-hidden"> {member.email}</span>
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Keep<span className="visually-hidden"> {member.email}</span>
            </button>
          </>
        )}
      </td>
    </tr>
  );
}

/** The Members screen. */
export function Members(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const list = useQuery(WorkspaceService.method.listBrandMembers, { brandId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  const add = useMutation(WorkspaceService.method.addBrandMember);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState('viewer');
  const [done, setDone] = useState<string | undefined>(undefined);
  const [rowError, setRowError] = useState<unknown>(null);
  const invalid = invalidFields(add.error);
  const onAdd = (event: FormEvent) => {
    event.preventDefault();
    setDone(undefined);
    setRowError(null);
    add.mutate(
      { brandId, email, name, role },
      {
        onSuccess: (r) => {
          setEmail('');
          setName('');
          setDone(
            `${r.member?.email ?? 'The user'} added as ${r.member?.role ?? role}${r.userCreated ? ` (a new user, id ${r.member?.userId ?? ''}: their sign-in provider's tokens name it as sub)` : ''}.`,
          );
          void refresh(queryClient);
        },
      },
    );
  };
  const members = list.data?.members ?? [];
  return (
    <>
      <h1>Members</h1>
      <p className="hint">Who may work on this brand, and with which role. The brand always keeps one owner.</p>
      <form className="grid-form" onSubmit={onAdd} aria-labelledby="member-new-title">
        <h2 id="member-new-title">Add a member</h2>
        <label htmlFor="member-email">E-mail address</label>
        <input
          id="member-email"
          inputMode="email"
          autoComplete="off"
          aria-invalid={invalid.has('email') || invalid.has('user_id')}
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="member-name">Name (for a new user)</label>
        <input id="member-name" aria-invalid={invalid.has('name')} value={name} onChange={(e) => setName(e.target.value)} />
        <label htmlFor="member-role">Role</label>
        <select id="member-role" aria-invalid={invalid.has('role')} value={role} onChange={(e) => setRole(e.target.value)}>
          {roleChoices.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <div className="actions">
          <button type="submit" disabled={add.isPending}>
            Add member
          </button>
        </div>
        <ErrorMessage error={add.error} />
      </form>
      {done !== undefined && (
        <p role="status" data-testid="member-done">
          {done}
        </p>
      )}
      <ErrorMessage error={list.error ?? rowError} />
      {list.data !== undefined && members.length === 0 && <p>No members.</p>}
      {members.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption>Members, oldest first</caption>
            <thead>
              <tr>
                <th>Member</th>
                <th>Change role</th>
                <th>Role</th>
                <th>Since (UTC)</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <MemberRow
                  key={`${m.userId} ${m.role}`}
                  member={m}
                  onChanged={(text) => {
                    setRowError(null);
                    add.reset();
                    setDone(text);
                  }}
                  onError={(e) => {
                    setDone(undefined);
                    setRowError(e);
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Members"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}
