import { useState } from 'react';
import type { AuditRow } from '../../src/modules/audit/repository.ts';
import type { User } from '../../src/modules/people/repository.ts';
import { api } from './api.ts';
import { LoadedTable } from './table.tsx';
import { SelectField, useLoad } from './ui.tsx';

const TARGETS: [string, string][] = [
  ['sites', 'Sites'],
  ['brands', 'Brands'],
  ['offers', 'Offers'],
  ['toplists', 'Toplists'],
  ['templates', 'Templates'],
  ['tracking', 'Tracking'],
  ['admin-tokens', 'Admin tokens'],
  ['webhooks', 'Webhooks'],
  ['adserver', 'Ad servers'],
];

/** A person as the screen names them: display name and email. */
const personName = (u: User) => `${u.displayName} (${u.email})`;

/** `user:<id>` as the person's name, when the people list holds them. */
const personOf = (actor: string, people: readonly User[]) => {
  const m = /^user:(\d+)$/.exec(actor);
  const u = m ? people.find((p) => p.id === Number(m[1])) : undefined;
  return u ? personName(u) : actor;
};

/** The audit log: every admin write, newest first, by target type and person; older pages by keyset. */
export function AuditScreen() {
  const [target, setTarget] = useState('');
  const [person, setPerson] = useState('');
  const users = useLoad(() => api<{ data: User[] }>('GET', '/users?limit=200'), 'audit-people');
  const people = users.data?.data ?? [];
  // The `before_id` of each page walked so far; the last is the page shown.
  const [cursors, setCursors] = useState<number[]>([]);
  const qs = new URLSearchParams({ limit: '50' });
  if (target) qs.set('target_type', target);
  if (person) qs.set('user_id', person);
  const before = cursors.at(-1);
  if (before !== undefined) qs.set('before_id', String(before));
  const log = useLoad(
    () => api<{ data: AuditRow[]; meta: { next_before_id: number | null } }>('GET', `/audit?${qs}`),
    qs.toString(),
  );
  const next = log.data?.meta.next_before_id ?? null;
  return (
    <section>
      <h1>Audit log</h1>
      <form className="row" aria-label="Audit filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          id="audit-target"
          label="Target"
          all="Everything"
          value={target}
          onChange={(v) => {
            setTarget(v);
            setCursors([]);
          }}
          options={TARGETS}
        />
        {people.length > 0 && (
          <SelectField
            id="audit-person"
            label="Person"
            all="Everyone"
            value={person}
            onChange={(v) => {
              setPerson(v);
              setCursors([]);
            }}
            options={people.map((u): [string, string] => [String(u.id), personName(u)])}
          />
        )}
      </form>
      <LoadedTable
        load={log}
        empty="Nothing recorded."
        testId="audit"
        columns={[
          { head: 'When', cell: (r) => new Date(r.at).toLocaleString() },
          { head: 'Who', cell: (r) => personOf(r.actor, people) },
          { head: 'Action', cell: (r) => <code>{r.action}</code> },
          { head: 'Target', cell: (r) => `${r.targetType} ${r.targetId ?? ''}` },
          { head: 'Status', num: true, cell: (r) => r.status },
          { head: 'Fields', className: 'small', cell: (r) => r.fields.join(', ') },
        ]}
      >
        <nav className="row pager" aria-label="Audit pages">
          <button
            type="button"
            disabled={cursors.length === 0}
            onClick={() => setCursors(cursors.slice(0, -1))}
          >
            Newer
          </button>
          <button
            type="button"
            disabled={next === null}
            onClick={() => next !== null && setCursors([...cursors, next])}
          >
            Older
          </button>
        </nav>
      </LoadedTable>
    </section>
  );
}
