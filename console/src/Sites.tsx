import { type FormEvent, useState } from 'react';
import { api, type Site, type SiteToken } from './api.ts';
import { FormCard, useAction, useForm } from './form.tsx';
import { MasterList, usePicked } from './lists.tsx';
import { TokenTable } from './tokens.tsx';
import { InputField, OutcomeLine, SecretOnce, Status, useLoad } from './ui.tsx';

/** Sites and their read tokens: create (shown once, with copy), list, revoke. */
export function SitesScreen() {
  const pick = usePicked<Site>('/sites', { perPage: 50 });
  const site = pick.current;
  return (
    <section className="split">
      <MasterList
        title="Sites"
        unit="site"
        pick={pick}
        search={{ id: 'site-search', label: 'Search sites', placeholder: 'name or domain' }}
        empty="No sites yet."
        item={(s) => (
          <>
            {s.name} <span className="muted">{s.domain}</span>
          </>
        )}
      >
        <NewSite onCreated={pick.saved} />
      </MasterList>
      {site && <Tokens key={site.id} siteId={site.id} />}
    </section>
  );
}

const SITE_SPECS = [
  { key: 'domain', id: 'site-domain', label: 'Domain' },
  { key: 'name', id: 'site-name', label: 'Name' },
] as const;

function NewSite({ onCreated }: { onCreated: (site: Site) => void }) {
  const form = useForm({ domain: '', name: '' });
  const create = () =>
    form.run(async () => {
      const r = await api<{ data: Site }>('POST', '/sites', {
        domain: form.f.domain.trim(),
        name: form.f.name.trim(),
      });
      form.setF({ domain: '', name: '' });
      onCreated(r.data);
      return `Site ${r.data.domain} created.`;
    });
  return (
    <FormCard
      id="new-site"
      title="New site"
      grid={false}
      form={form}
      specs={SITE_SPECS}
      onSubmit={create}
      submit="Create site"
    />
  );
}

function Tokens({ siteId }: { siteId: number }) {
  const tokens = useLoad(() => api<{ data: SiteToken[] }>('GET', `/sites/${siteId}/tokens`), String(siteId));
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const action = useAction();

  const create = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await api<{ data: { token: string; name: string } }>('POST', `/sites/${siteId}/tokens`, {
        name,
      });
      setCreated(r.data);
      setName('');
      tokens.reload();
      return undefined;
    });
  };
  const revoke = (t: SiteToken) => {
    if (!window.confirm(`Revoke token "${t.name || t.hint}"? Sites using it stop working at once.`)) return;
    void action.run(async () => {
      await api('DELETE', `/sites/${siteId}/tokens/${t.id}`);
      tokens.reload();
      return `Revoked ${t.hint}`;
    });
  };
  return (
    <div>
      <h2>Tokens</h2>
      <form onSubmit={create} className="row">
        <InputField id="token-name" label="New token name" value={name} onChange={setName} maxLength={100} />
        <button type="submit">Create token</button>
      </form>
      {created && (
        <SecretOnce
          secret={created.token}
          testId="new-token"
          copyLabel="Copy token"
          onDone={() => setCreated(null)}
        >
          Token <strong>{created.name || '(unnamed)'}</strong> — copy it now, it is shown only once:
        </SecretOnce>
      )}
      <OutcomeLine outcome={action.outcome} />
      <Status load={tokens} empty={tokens.data?.data.length === 0 && 'No tokens.'}>
        <TokenTable tokens={tokens.data?.data ?? []} onRevoke={revoke} />
      </Status>
    </div>
  );
}
