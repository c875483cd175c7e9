import { useState } from 'react';
import { SCOPES } from '../../src/modules/access/scopes.ts';
import { type AdminToken, api } from './api.ts';
import { FormCard, useForm } from './form.tsx';
import { type NewToken, TokenList, useTokens } from './tokens.tsx';

/** Admin tokens: create one with its scopes (the token is shown once), list them, revoke. */
export function AdminTokensScreen() {
  const tokens = useTokens<AdminToken>('/admin-tokens');
  return (
    <section>
      <h1>Admin tokens</h1>
      <NewAdminToken onCreated={tokens.show} />
      <TokenList
        state={tokens}
        noun="Admin token"
        testId="new-admin-token"
        empty="No admin tokens."
        scopes
        onRevoke={(t) =>
          tokens.revoke(
            t,
            `Revoke admin token "${t.name}"? Whoever uses it is refused at once.`,
            `Revoked ${t.name}.`,
          )
        }
      />
    </section>
  );
}

function NewAdminToken({ onCreated }: { onCreated: (t: NewToken) => void }) {
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
      record={{ unit: 'admin token' }}
      form={form}
      specs={[{ key: 'name', id: 'admin-token-name', label: 'Name' }]}
      shown={form.outcome.field?.startsWith('scopes') ? [form.outcome.field] : []}
      onSubmit={create}
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
