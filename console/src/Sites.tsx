import { type FormEvent, useState } from 'react';
import { api, type Site, type SiteToken } from './api.ts';
import { FormCard, useForm } from './form.tsx';
import { ListScreen, usePicked, withNote } from './lists.tsx';
import { type NewToken, TokenList, useTokens } from './tokens.tsx';
import { InputField } from './ui.tsx';

/** Sites and their read tokens: create (shown once, with copy), list, revoke. */
export function SitesScreen() {
  const pick = usePicked<Site>('/sites');
  return (
    <ListScreen
      unit="site"
      pick={pick}
      search={{ id: 'site-search', label: 'Search sites', placeholder: 'name or domain' }}
      empty="No sites yet."
      item={withNote((s) => s.domain)}
      detail={(site) => site && <Tokens siteId={site.id} />}
    >
      <NewSite onCreated={pick.saved} />
    </ListScreen>
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
  return <FormCard record={{ unit: 'site' }} grid={false} form={form} specs={SITE_SPECS} onSubmit={create} />;
}

function Tokens({ siteId }: { siteId: number }) {
  const path = `/sites/${siteId}/tokens`;
  const tokens = useTokens<SiteToken>(path);
  const [name, setName] = useState('');
  const create = (e: FormEvent) => {
    e.preventDefault();
    void tokens.action.run(async () => {
      const r = await api<{ data: NewToken }>('POST', path, { name });
      tokens.show(r.data);
      setName('');
      return undefined;
    });
  };
  return (
    <div>
      <h2>Tokens</h2>
      <form onSubmit={create} className="row">
        <InputField id="token-name" label="New token name" value={name} onChange={setName} maxLength={100} />
        <button type="submit">Create token</button>
      </form>
      <TokenList
        state={tokens}
        noun="Token"
        testId="new-token"
        empty="No tokens."
        onRevoke={(t) =>
          tokens.revoke(
            t,
            `Revoke token "${t.name || t.hint}"? Sites using it stop working at once.`,
            `Revoked ${t.hint}`,
          )
        }
      />
    </div>
  );
}
