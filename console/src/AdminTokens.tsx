import { useState } from 'react';
import { SCOPES } from '../../src/modules/access/scopes.ts';
import { type AdminToken, api } from './api.ts';
import { FormCard, useAction, useForm } from './form.tsx';
import { TokenTable } from './tokens.tsx';
import { OutcomeLine, SecretOnce, Status, useLoad } from './ui.tsx';

/** Admin tokens: create one with its scopes (the token is shown once), list them, revoke. */
export function AdminTokensScreen() {
  const tokens = useLoad(() => api<{ data: AdminToken[] }>('GET', '/admin-tokens'), '');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const action = useAction();
  const revoke = (t: AdminToken) => {
    if (!window.confirm(`Revoke admin token "${t.name}"? Whoever uses it is refused at once.`)) return;
    void action.run(async () => {
      await api('DELETE', `/admin-tokens/${t.id}`);
      tokens.reload();
      return `Revoked ${t.name}.`;
    });
  };
  return (
    <section>
      <h1>Admin tokens</h1>
      <NewAdminToken
        onCreated={(t) => {
          setCreated(t);
          tokens.reload();
        }}
      />
      {created && (
        <SecretOnce
          secret={created.token}
          testId="new-admin-token"
          copyLabel="Copy token"
          onDone={() => setCreated(null)}
        >
          Admin token <strong>{created.name}</strong> — copy it now, it is shown only once:
        </SecretOnce>
      )}
      <OutcomeLine outcome={action.outcome} />
      <Status load={tokens} empty={tokens.data?.data.length === 0 && 'No admin tokens.'}>
        <TokenTable tokens={tokens.data?.data ?? []} onRevoke={revoke} scopes />
      </Status>
    </section>
  );
}

function NewAdminToken({ onCreated }: { onCreated: (t: { token: string; name: string }) => void }) {
  const form = useForm({ name: '' });
  const [scopes, setScopes] = useState<string[]>(['catalog:read']);
  const toggle = (s: string) =>
    setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s]);
  const create = () =>
    form.run(async () => {
      const r = await api<{ data: AdminToken & { token: string } }>('POST', '/admin-tokens', {
        name: form.f.name.trim(),
        scopes,
      });
      form.setF({ name: '' });
      onCreated(r.data);
      return undefined;
    });
  return (
    <FormCard
      id="new-admin-token"
      title="New admin token"
      form={form}
      specs={[{ key: 'name', id: 'admin-token-name', label: 'Name' }]}
      shown={form.outcome.field?.startsWith('scopes') ? [form.outcome.field] : []}
      onSubmit={create}
      submit="Create admin token"
      grid={false}
    >
      <fieldset aria-invalid={form.outcome.field?.startsWith('scopes')}>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label key={s} className="check">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} /> {s}
          </label>
        ))}
        {form.outcome.field?.startsWith('scopes') && (
          <span className="error" role="alert">
            {form.outcome.error}
          </span>
        )}
      </fieldset>
    </FormCard>
  );
}
