import { type FormEvent, useState } from 'react';
import { api, type Page, type Site, type SiteToken } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine, Status, useLoad } from './ui.tsx';

/** Sites and their read tokens: create (shown once, with copy), list, revoke. */
export function SitesScreen() {
  const sites = useLoad(() => api<Page<Site>>('GET', '/sites?per_page=100'), '');
  const [siteId, setSiteId] = useState<number | null>(null);
  const current = siteId ?? sites.data?.data[0]?.id ?? null;
  return (
    <section className="split">
      <div>
        <h1>Sites</h1>
        <Status
          loading={sites.loading}
          error={sites.error}
          empty={sites.data?.data.length === 0 && 'No sites yet.'}
        >
          <ul className="picklist">
            {sites.data?.data.map((s) => (
              <li key={s.id}>
                <button type="button" aria-pressed={s.id === current} onClick={() => setSiteId(s.id)}>
                  {s.name} <span className="muted">{s.domain}</span>
                </button>
              </li>
            ))}
          </ul>
        </Status>
        <NewSite
          onCreated={(site) => {
            setSiteId(site.id);
            sites.reload();
          }}
        />
      </div>
      {current !== null && <Tokens key={current} siteId={current} />}
    </section>
  );
}

function NewSite({ onCreated }: { onCreated: (site: Site) => void }) {
  const [f, setF] = useState({ domain: '', name: '' });
  const [outcome, setOutcome] = useState<Outcome>({});
  const create = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const r = await api<{ data: Site }>('POST', '/sites', { domain: f.domain.trim(), name: f.name.trim() });
      setF({ domain: '', name: '' });
      setOutcome({ ok: `Site ${r.data.domain} created.` });
      onCreated(r.data);
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  return (
    <form onSubmit={create} className="card" aria-labelledby="new-site" noValidate>
      <h2 id="new-site">New site</h2>
      <Field
        id="site-domain"
        label="Domain"
        value={f.domain}
        onChange={(v) => setF({ ...f, domain: v })}
        outcome={outcome}
        field="domain"
      />
      <Field
        id="site-name"
        label="Name"
        value={f.name}
        onChange={(v) => setF({ ...f, name: v })}
        outcome={outcome}
        field="name"
      />
      <OutcomeLine outcome={outcome} shown={['domain', 'name']} />
      <button type="submit">Create site</button>
    </form>
  );
}

function Tokens({ siteId }: { siteId: number }) {
  const tokens = useLoad(() => api<{ data: SiteToken[] }>('GET', `/sites/${siteId}/tokens`), String(siteId));
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [outcome, setOutcome] = useState<Outcome>({});
  const [copied, setCopied] = useState(false);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const r = await api<{ data: { token: string; name: string } }>('POST', `/sites/${siteId}/tokens`, {
        name,
      });
      setCreated(r.data);
      setCopied(false);
      setName('');
      setOutcome({});
      tokens.reload();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const revoke = async (t: SiteToken) => {
    if (!window.confirm(`Revoke token "${t.name || t.hint}"? Sites using it stop working at once.`)) return;
    try {
      await api('DELETE', `/sites/${siteId}/tokens/${t.id}`);
      setOutcome({ ok: `Revoked ${t.hint}` });
      tokens.reload();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const copy = async (token: string) => {
    await navigator.clipboard.writeText(token);
    setCopied(true);
  };

  return (
    <div>
      <h2>Tokens</h2>
      <form onSubmit={create} className="row">
        <div className="field">
          <label htmlFor="token-name">New token name</label>
          <input id="token-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </div>
        <button type="submit">Create token</button>
      </form>
      {created && (
        <div className="notice" role="status">
          <p>
            Token <strong>{created.name || '(unnamed)'}</strong> — copy it now, it is shown only once:
          </p>
          <code className="secret" data-testid="new-token">
            {created.token}
          </code>
          <button type="button" onClick={() => copy(created.token)}>
            {copied ? 'Copied' : 'Copy token'}
          </button>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <OutcomeLine outcome={outcome} />
      <Status
        loading={tokens.loading}
        error={tokens.error}
        empty={tokens.data?.data.length === 0 && 'No tokens.'}
      >
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {tokens.data?.data.map((t) => (
              <tr key={t.id}>
                <td>{t.name || <span className="muted">(unnamed)</span>}</td>
                <td>
                  <code>{t.hint}</code>
                </td>
                <td>{new Date(t.createdAt).toLocaleString()}</td>
                <td>
                  {t.revokedAt ? (
                    <span className="badge off">revoked</span>
                  ) : (
                    <button type="button" onClick={() => revoke(t)} aria-label={`Revoke ${t.name || t.hint}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Status>
    </div>
  );
}
