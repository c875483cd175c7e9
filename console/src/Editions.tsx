import { useEffect, useState } from 'react';
import { api, type Edition, type WireToplist } from './api.ts';
import { diffEditions } from './edition-diff.ts';
import { Table } from './table.tsx';
import { PickList, SelectField, Status } from './ui.tsx';

/** Fetches edition documents on demand and keeps them (editions never change once published). */
function useEditionDocs(toplistId: number, wanted: (string | null)[]) {
  const [docs, setDocs] = useState<Record<string, WireToplist>>({});
  const [error, setError] = useState('');
  const missing = wanted.filter((v): v is string => v !== null && !docs[v]).join(',');
  useEffect(() => {
    for (const v of missing ? missing.split(',') : []) {
      api<{ data: WireToplist }>('GET', `/toplists/${toplistId}/editions/${v}`).then(
        (r) => setDocs((d) => ({ ...d, [v]: r.data })),
        (err: Error) => setError(`version ${v}: ${err.message}`),
      );
    }
  }, [toplistId, missing]);
  return { docs, error };
}

/** Edition history: each edition's public JSON, and the item changes between two chosen editions. */
export function EditionHistory({
  toplistId,
  editions,
  loading,
  error,
  shown,
  onShow,
}: {
  toplistId: number;
  editions: Edition[] | undefined;
  loading: boolean;
  error?: string;
  shown: string | null;
  onShow: (version: string) => void;
}) {
  const latest = editions?.[0]?.version ?? null;
  const previous = editions?.[1]?.version ?? null;
  const [pick, setPick] = useState<{ from: string | null; to: string | null }>({ from: null, to: null });
  const from = pick.from ?? previous;
  const to = pick.to ?? latest;
  const { docs, error: docError } = useEditionDocs(toplistId, [shown, from, to]);
  const older = from ? docs[from] : undefined;
  const newer = to ? docs[to] : undefined;

  return (
    <div>
      <h2>Edition history</h2>
      <Status loading={loading} error={error} empty={editions?.length === 0 && 'Never published.'}>
        <PickList
          items={editions}
          itemKey={(ed) => ed.version}
          current={shown}
          onPick={(ed) => onShow(ed.version)}
        >
          {(ed) => (
            <>
              v{ed.version} · {new Date(ed.publishedAt).toLocaleString()}
              {ed.version === latest && <span className="muted"> (latest)</span>}
            </>
          )}
        </PickList>
        {editions && editions.length >= 2 && (
          <section aria-labelledby="diff-heading" className="card diff">
            <h3 id="diff-heading">Compare two editions</h3>
            <div className="row">
              {(
                [
                  ['from', 'diff-from', 'Older version', from],
                  ['to', 'diff-to', 'Newer version', to],
                ] as const
              ).map(([end, id, label, value]) => (
                <SelectField
                  key={end}
                  id={id}
                  label={label}
                  value={value ?? ''}
                  onChange={(v) => setPick({ ...pick, [end]: v })}
                  options={editions.map((ed) => [ed.version, `v${ed.version}`])}
                />
              ))}
            </div>
            <Status loading={!older || !newer} error={docError}>
              {older && newer && <DiffTable older={older} newer={newer} />}
            </Status>
          </section>
        )}
      </Status>
      {shown && (
        // Folded by default: the document is long and the diff above is what is usually read.
        <details className="edition-json">
          <summary>Public JSON of version {shown}</summary>
          <Status loading={!docs[shown]} error={docError}>
            <pre className="json" data-testid="edition-json">
              {JSON.stringify(docs[shown], null, 2)}
            </pre>
          </Status>
        </details>
      )}
    </div>
  );
}

const KIND_LABEL = { added: 'Added', removed: 'Removed', changed: 'Changed' } as const;

function DiffTable({ older, newer }: { older: WireToplist; newer: WireToplist }) {
  if (older.version === newer.version) return <p className="muted">Pick two different versions.</p>;
  const changes = diffEditions(older, newer);
  const renamed = older.name !== newer.name;
  return (
    <>
      {renamed && (
        <p>
          Name: {older.name} → {newer.name}
        </p>
      )}
      {changes.length === 0 ? (
        <p className="muted">
          No item changes between v{older.version} and v{newer.version}.
        </p>
      ) : (
        <Table
          testId="edition-diff"
          caption={`Item changes from version ${older.version} to version ${newer.version}`}
          rows={changes}
          rowKey={(c) => `${c.kind}-${c.position}-${c.brand}`}
          rowProps={(c) => ({ className: `diff-${c.kind}` })}
          columns={[
            { head: 'Pos.', cell: (c) => c.position },
            { head: 'Change', cell: (c) => <span className={`badge ${c.kind}`}>{KIND_LABEL[c.kind]}</span> },
            { head: 'Brand', cell: (c) => c.brand },
            { head: 'Details', cell: (c) => c.details.map((d) => <div key={d}>{d}</div>) },
          ]}
        />
      )}
    </>
  );
}
