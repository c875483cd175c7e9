import { type FormEvent, useState } from 'react';
import type { SessionListing } from '../../src/modules/access/repository.ts';
import type { Site } from '../../src/modules/catalog/types.ts';
import type { Role, User } from '../../src/modules/people/repository.ts';
import type { IssuedLink } from '../../src/modules/people/types.ts';
import { ApiError, api, SIGNED_OUT_EVENT } from './api.ts';
import { RequireTwoFactor, TwoFactorCard } from './TwoFactor.tsx';
import { ACTIONS, LoadedTable } from './table.tsx';
import { InputField, SecretOnce, Status, useLoad } from './ui.tsx';

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * A list's one-click actions: each runs (after `onStart`), its sentence or its error becomes the
 * outcome line, and the list reloads after a success.
 */
function useActs(reload: () => void, onStart?: () => void) {
  const [outcome, setOutcome] = useState('');
  const act = async (what: () => Promise<unknown>, done: string) => {
    setOutcome('');
    onStart?.();
    try {
      await what();
      setOutcome(done);
      reload();
    } catch (err) {
      setOutcome(message(err));
    }
  };
  return { outcome, act };
}

/** A one-time link as issued: "mailed", or the link to copy (with the mail's failure, if it failed). */
type Issued = { link: IssuedLink; to: string; what: 'invitation' | 'password-reset' };

function IssuedNotice({ issued, onDone }: { issued: Issued; onDone: () => void }) {
  const { link, to, what } = issued;
  const label = what === 'invitation' ? 'invitation' : 'password-reset';
  if (link.mailed)
    return (
      <p role="status">
        Mailed the {label} link to {to} (valid until {new Date(link.expiresAt).toLocaleString()}).
      </p>
    );
  return (
    <SecretOnce secret={link.url} testId={`${what}-link`} copyLabel="Copy link" onDone={onDone}>
      {link.warning ?? 'No mail is sent from this Podium.'} Pass this one-time {label} link to {to} (it is
      shown only now).
    </SecretOnce>
  );
}

/** The sites a user is limited to: every site, or those picked (the server enforces it on every admin route). */
function SitesOf({
  user,
  sites,
  onSave,
}: {
  user: User;
  sites: Site[];
  onSave: (ids: number[] | null) => void;
}) {
  const [all, setAll] = useState(user.siteIds === null);
  const [chosen, setChosen] = useState<string[]>((user.siteIds ?? []).map(String));
  return (
    <div>
      <label>
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Every site
      </label>
      {!all && (
        <select
          multiple
          aria-label={`Sites of ${user.email}`}
          value={chosen}
          onChange={(e) => setChosen([...e.target.selectedOptions].map((o) => o.value))}
        >
          {sites.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      )}
      <button
        type="button"
        disabled={!all && chosen.length === 0}
        onClick={() => onSave(all ? null : chosen.map(Number))}
      >
        Save sites of {user.email}
      </button>
    </div>
  );
}

/**
 * Invitations: the people invited who have not set a password yet, when they were invited, a new
 * link for each (mailed, or shown to copy; the earlier link stops working) and withdrawing one
 * (the person is suspended, so no link of theirs can be accepted).
 */
export function InvitationsScreen() {
  const pending = useLoad(() => api<{ data: User[] }>('GET', '/users?status=invited&limit=200'), 'invited');
  const [issued, setIssued] = useState<Issued | null>(null);
  const { outcome, act } = useActs(pending.reload, () => setIssued(null));
  return (
    <section>
      <h1>Invitations</h1>
      <p className="muted">
        People invited who have not set their password yet. Invite someone on <a href="#/users">Users</a>.
      </p>
      {issued && <IssuedNotice issued={issued} onDone={() => setIssued(null)} />}
      {outcome && !issued && <p role="status">{outcome}</p>}
      <LoadedTable
        load={pending}
        empty="No pending invitations."
        testId="invitations"
        columns={[
          { head: 'Email', rowHeader: true, cell: (u) => u.email },
          { head: 'Name', cell: (u) => u.displayName || '—' },
          { head: 'Role', cell: (u) => u.role.name },
          { head: 'Invited', cell: (u) => new Date(u.createdAt).toLocaleString() },
          {
            head: ACTIONS,
            cell: (u) => (
              <>
                <button
                  type="button"
                  onClick={() =>
                    act(async () => {
                      const r = await api<{ data: IssuedLink }>('POST', `/users/${u.id}/invitation`);
                      setIssued({ link: r.data, to: u.email, what: 'invitation' });
                    }, `Issued a new invitation link for ${u.email}.`)
                  }
                >
                  New link for {u.email}
                </button>{' '}
                <button
                  type="button"
                  onClick={() =>
                    window.confirm(`Withdraw the invitation to ${u.email}? Their links stop working.`) &&
                    act(() => api('POST', `/users/${u.id}/suspend`), `Withdrew the invitation to ${u.email}.`)
                  }
                >
                  Withdraw invitation to {u.email}
                </button>
              </>
            ),
          },
        ]}
      />
    </section>
  );
}

/** Users: invite with a role (the link is mailed, or shown to copy), change role or sites, reset a password, suspend, reactivate. */
export function UsersScreen() {
  const users = useLoad(() => api<{ data: User[] }>('GET', '/users?limit=200'), 'users');
  const sites = useLoad(() => api<{ data: Site[] }>('GET', '/sites?per_page=100'), 'sites');
  const roles = useLoad(() => api<{ data: Role[] }>('GET', '/roles'), 'roles');
  const [issued, setIssued] = useState<Issued | null>(null);
  const { outcome, act } = useActs(users.reload);
  return (
    <section>
      <h1>Users</h1>
      <RequireTwoFactor />
      <Invite
        roles={roles.data?.data ?? []}
        onInvited={(link, to) => {
          setIssued({ link, to, what: 'invitation' });
          users.reload();
        }}
      />
      {issued && <IssuedNotice issued={issued} onDone={() => setIssued(null)} />}
      {outcome && <p role="status">{outcome}</p>}
      <Status load={users} empty={users.data?.data.length === 0 && 'No users.'}>
        <table>
          <thead>
            <tr>
              <th>Email</th>
              <th>Name</th>
              <th>Role</th>
              <th>Sites</th>
              <th>Status</th>
              <th>Last sign-in</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data?.data.map((u) => (
              <tr key={u.id}>
                <td>{u.email}</td>
                <td>{u.displayName}</td>
                <td>
                  <label className="sr-only" htmlFor={`role-${u.id}`}>
                    Role of {u.email}
                  </label>
                  <select
                    id={`role-${u.id}`}
                    value={u.role.id}
                    onChange={(e) =>
                      act(
                        () => api('PATCH', `/users/${u.id}`, { roleId: Number(e.target.value) }),
                        `Changed the role of ${u.email}.`,
                      )
                    }
                  >
                    {(roles.data?.data ?? [u.role]).map((r) => (
                      <option key={r.id} value={r.id}>
                        {r.name}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <SitesOf
                    key={`${u.id}-${(u.siteIds ?? []).join(',')}`}
                    user={u}
                    sites={sites.data?.data ?? []}
                    onSave={(siteIds) =>
                      act(
                        () => api('PATCH', `/users/${u.id}`, { siteIds }),
                        `Changed the sites of ${u.email}.`,
                      )
                    }
                  />
                </td>
                <td>
                  {u.status}
                  {u.twoFactorEnabled ? ' · two-factor' : ''}
                </td>
                <td>{u.lastSignInAt ? new Date(u.lastSignInAt).toLocaleString() : '—'}</td>
                <td>
                  {u.status === 'active' && (
                    <button
                      type="button"
                      onClick={() =>
                        act(async () => {
                          const r = await api<{ data: IssuedLink }>('POST', `/users/${u.id}/password-reset`);
                          setIssued({ link: r.data, to: u.email, what: 'password-reset' });
                        }, `Issued a password-reset link for ${u.email}.`)
                      }
                    >
                      Reset password of {u.email}
                    </button>
                  )}{' '}
                  {u.status === 'suspended' ? (
                    <button
                      type="button"
                      onClick={() =>
                        act(() => api('POST', `/users/${u.id}/reactivate`), `Reactivated ${u.email}.`)
                      }
                    >
                      Reactivate {u.email}
                    </button>
                  ) : (
                    <button
                      type="button"
                      onClick={() =>
                        window.confirm(
                          `Suspend ${u.email}? Their sessions and personal tokens end at once.`,
                        ) && act(() => api('POST', `/users/${u.id}/suspend`), `Suspended ${u.email}.`)
                      }
                    >
                      Suspend {u.email}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Status>
    </section>
  );
}

function Invite({ roles, onInvited }: { roles: Role[]; onInvited: (link: IssuedLink, to: string) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const chosen = roleId || String(roles.find((r) => r.name === 'viewer')?.id ?? '');
      const r = await api<{ invitation: IssuedLink }>('POST', '/users', {
        email: email.trim(),
        displayName: name.trim(),
        roleId: Number(chosen),
      });
      setEmail('');
      setName('');
      onInvited(r.invitation, email.trim());
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Invite a person">
      <h2>Invite a person</h2>
      <InputField id="invite-email" label="Email" type="email" value={email} onChange={setEmail} required />
      <InputField id="invite-name" label="Display name" value={name} onChange={setName} />
      <div className="field">
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" value={roleId} onChange={(e) => setRoleId(e.target.value)}>
          <option value="">viewer</option>
          {roles
            .filter((r) => r.name !== 'viewer')
            .map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
        </select>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={!email.trim()}>
        Invite
      </button>
    </form>
  );
}

/** Your profile: change the password, see your sessions, sign out everywhere. */
export function ProfileScreen() {
  const me = useLoad(() => api<{ data: User }>('GET', '/me'), 'me');
  const sessions = useLoad(() => api<{ data: SessionListing[] }>('GET', '/me/sessions'), 'sessions');
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [outcome, setOutcome] = useState('');
  const change = async (e: FormEvent) => {
    e.preventDefault();
    setOutcome('');
    try {
      await api('POST', '/me/password', { currentPassword: current, newPassword: next });
      setCurrent('');
      setNext('');
      setOutcome('Password changed; your other sessions were signed out.');
      sessions.reload();
    } catch (err) {
      setOutcome(message(err));
    }
  };
  const everywhere = async () => {
    await api('DELETE', '/me/sessions').catch(() => undefined);
    window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
  };
  return (
    <section>
      <h1>Your profile</h1>
      <Status load={me}>
        <p>
          {me.data?.data.email} · role {me.data?.data.role.name}
        </p>
      </Status>
      <form className="card" onSubmit={change} aria-label="Change password">
        <h2>Change password</h2>
        <InputField
          id="current-password"
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={setCurrent}
          required
        />
        <InputField
          id="new-password"
          label="New password (12 characters or more)"
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={setNext}
          required
        />
        <button type="submit">Change password</button>
      </form>
      {outcome && <p role="status">{outcome}</p>}
      <TwoFactorCard />
      <h2>Sessions</h2>
      <Status load={sessions} empty={sessions.data?.data.length === 0 && 'No sessions.'}>
        <ul>
          {sessions.data?.data.map((s) => (
            <li key={s.id}>
              {new Date(s.createdAt).toLocaleString()} from {s.address ?? 'unknown'} · {s.userAgent ?? ''}
            </li>
          ))}
        </ul>
      </Status>
      <button type="button" onClick={everywhere}>
        Sign out everywhere
      </button>
    </section>
  );
}

/** What the two one-time link pages differ in: where they post, and their words. */
const LINK_PAGES = {
  accept: {
    path: '/invitations/accept',
    title: 'Set your password',
    button: 'Set password',
    doneTitle: 'Password set',
    done: (email: string) => `Your account ${email} is ready.`,
  },
  reset: {
    path: '/session/reset/accept',
    title: 'Choose a new password',
    button: 'Set new password',
    doneTitle: 'Password changed',
    done: (email: string) =>
      `The password of ${email} is changed; every session of the account was signed out.`,
  },
} as const;

/**
 * The page a one-time link opens: `#/accept/<secret>` (an invitation or the first-run link:
 * choose a password, optionally a display name) or `#/reset/<secret>` (a password reset).
 */
export function OneTimeLinkPage({ secret, kind }: { secret: string; kind: keyof typeof LINK_PAGES }) {
  const words = LINK_PAGES[kind];
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const r = await api<{ data: User }>('POST', words.path, {
        secret,
        password,
        ...(kind === 'accept' && name.trim() ? { displayName: name.trim() } : {}),
      });
      setDone(r.data.email);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : message(err));
    }
  };
  if (done)
    return (
      <main className="signin">
        <h1>{words.doneTitle}</h1>
        <p role="status">{words.done(done)}</p>
        <a href="#/toplists">Sign in</a>
      </main>
    );
  return (
    <main className="signin">
      <h1>{words.title}</h1>
      <form onSubmit={submit}>
        {kind === 'accept' && (
          <InputField id="accept-name" label="Display name (optional)" value={name} onChange={setName} />
        )}
        <InputField
          id="accept-password"
          label="New password (12 characters or more)"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
          required
        />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={!password}>
          {words.button}
        </button>
      </form>
    </main>
  );
}

/** "Forgot password?": asks for a reset link by mail; the answer is the same for every email. */
export function ForgotPassword({ onBack }: { onBack: () => void }) {
  const [email, setEmail] = useState('');
  const [answer, setAnswer] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const r = await api<{ data: { message: string } }>('POST', '/session/reset', { email: email.trim() });
      setAnswer(r.data.message);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main className="signin">
      <h1>Reset your password</h1>
      {answer ? (
        <p role="status">{answer}</p>
      ) : (
        <form onSubmit={submit}>
          <InputField
            id="forgot-email"
            label="Email"
            type="email"
            autoComplete="username"
            value={email}
            onChange={setEmail}
            required
          />
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" disabled={!email.trim()}>
            Send reset link
          </button>
        </form>
      )}
      <button type="button" className="link" onClick={onBack}>
        Back to sign-in
      </button>
    </main>
  );
}
