import { useState } from 'react';
import { hasScope, SCOPE_DESCRIPTIONS, SCOPES } from '../../src/modules/access/scopes.ts';
import type { Role } from '../../src/modules/people/repository.ts';
import { api } from './api.ts';
import { FormCard, saveRecord, useAction, useForm } from './form.tsx';
import { ACTIONS, Table } from './table.tsx';
import { OutcomeLine, Status, useLoad } from './ui.tsx';

/**
 * Roles: the built-in ones with their scopes (fixed), and custom ones listed, created, edited and
 * deleted. Only `users:write` may change roles, so others get the list alone; without
 * `users:read` the API refuses the list and the screen says so.
 */
export function RolesScreen() {
  const roles = useLoad(() => api<{ data: Role[] }>('GET', '/roles'), 'roles');
  const session = useLoad(() => api<{ data: { scopes: string[] } }>('GET', '/session'), 'session');
  const canWrite = hasScope(session.data?.data.scopes ?? [], 'users:write');
  const [editing, setEditing] = useState<Role | undefined>(undefined);
  const action = useAction();
  const remove = (r: Role) =>
    window.confirm(`Delete the role ${r.name}?`) &&
    action.run(async () => {
      await api('DELETE', `/roles/${r.id}`);
      if (editing?.id === r.id) setEditing(undefined);
      roles.reload();
      return `Role ${r.name} deleted.`;
    });
  const list = roles.data?.data ?? [];
  return (
    <section>
      <h1>Roles</h1>
      <p className="muted">
        A role is a set of scopes; each person holds one. Built-in roles are fixed; a change to a custom role
        applies to its holders from their next request.
      </p>
      {canWrite && (
        <RoleForm
          key={editing?.id ?? 'new'}
          role={editing}
          onSaved={(line) => {
            setEditing(undefined);
            action.setOutcome({ ok: line });
            roles.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <OutcomeLine outcome={action.outcome} />
      <Status load={roles}>
        <Table
          label="Roles"
          rows={list}
          columns={[
            { head: 'Role', cell: (r) => r.name, rowHeader: true, sub: (r) => r.description },
            { head: 'Kind', cell: (r) => (r.builtIn ? 'built-in' : 'custom') },
            { head: 'Scopes', cell: (r) => <ScopeList scopes={r.scopes} /> },
            canWrite && {
              head: ACTIONS,
              cell: (r) =>
                !r.builtIn && (
                  <div className="row">
                    <button type="button" onClick={() => setEditing(r)}>
                      Edit {r.name}
                    </button>
                    <button type="button" onClick={() => remove(r)}>
                      Delete {r.name}
                    </button>
                  </div>
                ),
            },
          ]}
        />
      </Status>
    </section>
  );
}

/** A role's scopes, each with what it allows. */
function ScopeList({ scopes }: { scopes: readonly string[] }) {
  return (
    <ul className="plain">
      {scopes.map((s) => (
        <li key={s}>
          <code>{s}</code>{' '}
          <span className="muted small">{SCOPE_DESCRIPTIONS[s as keyof typeof SCOPE_DESCRIPTIONS]}</span>
        </li>
      ))}
    </ul>
  );
}

/** Creates a custom role, or edits `role`: name, description and scopes picked from the catalogue. */
function RoleForm({
  role,
  onSaved,
  onCancel,
}: {
  role: Role | undefined;
  /** Takes the line saying what was saved: the screen shows it, as an edited role's form closes. */
  onSaved: (line: string) => void;
  onCancel: () => void;
}) {
  const form = useForm({ name: role?.name ?? '', description: role?.description ?? '' });
  const [scopes, setScopes] = useState<string[]>(role?.scopes ?? []);
  const toggle = (s: string) =>
    setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s]);
  const scopesWrong = form.outcome.field?.startsWith('scopes') ?? false;
  const save = () =>
    form.run(async () => {
      const done = await saveRecord(
        { unit: 'role', path: '/roles', record: role, onSaved: () => undefined },
        { name: form.f.name.trim(), description: form.f.description.trim(), scopes },
        {},
      );
      if (!role) {
        form.setF({ name: '', description: '' });
        setScopes([]);
      }
      onSaved(done);
      return undefined;
    });
  return (
    <FormCard
      record={{ unit: 'role', name: role?.name }}
      id={role ? 'edit-role' : undefined}
      form={form}
      specs={[
        { key: 'name', id: 'role-name', label: 'Name', required: true },
        { key: 'description', id: 'role-description', label: 'Description' },
      ]}
      shown={scopesWrong ? [form.outcome.field!] : []}
      onSubmit={save}
      grid={false}
      actions={
        role && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )
      }
    >
      <fieldset aria-invalid={scopesWrong}>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label key={s} className="check">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} /> <code>{s}</code>{' '}
            <span className="muted small">{SCOPE_DESCRIPTIONS[s]}</span>
          </label>
        ))}
        {scopesWrong && (
          <span className="error" role="alert">
            {form.outcome.fieldError ?? form.outcome.error}
          </span>
        )}
      </fieldset>
    </FormCard>
  );
}
