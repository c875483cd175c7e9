import { useState } from 'react';
import {
  AREAS,
  actorText,
  auditActions,
  sentenceParts,
  type TargetKind,
} from '../../src/modules/audit/phrases.ts';
import type { AuditView } from '../../src/modules/audit/service.ts';
import type { User } from '../../src/modules/people/repository.ts';
import { api } from './api.ts';
import { fieldChanges } from './audit-diff.ts';
import { useHashFilters } from './hash-query.ts';
import { ACTIONS, LoadedTable, Table } from './table.tsx';
import { capitalized, InputField, SelectField, useLoad } from './ui.tsx';

/** A person as the screen names them: display name and email. */
const personName = (u: User) => `${u.displayName} (${u.email})`;

/** Who acted: the person by name and email when the people list holds them, else as the API names them. */
const whoOf = (r: AuditView, people: readonly User[]) => {
  const u = r.userId !== null ? people.find((p) => p.id === r.userId) : undefined;
  return u && r.actor === `user:${u.id}` ? personName(u) : actorText(r.actor, r.actorName);
};

/** The screen each kind of target is managed on (a toplist opens itself). */
const SCREEN_OF: Partial<Record<TargetKind, (id: string) => string>> = {
  toplist: (id) => `#/toplists/${id}`,
  brand: () => '#/brands',
  offer: () => '#/brands',
  site: () => '#/sites',
  template: () => '#/templates',
  webhook: () => '#/webhooks',
  user: () => '#/users',
  'admin-token': () => '#/admin-tokens',
  program: () => '#/programmes',
  rule: () => '#/compliance',
  postback: () => '#/postbacks',
  connection: () => '#/adservers',
  booking: () => '#/adservers/bookings',
  product: () => '#/products',
  reservation: () => '#/reservations',
  statement: () => '#/statements',
  creative: () => '#/creatives',
};

/** The row as a sentence, the target's name a link to its screen while it exists. */
function Sentence({ row }: { row: AuditView }) {
  const s = sentenceParts(row);
  const link =
    s.kind && row.targetId !== null && row.targetName ? SCREEN_OF[s.kind]?.(row.targetId) : undefined;
  return (
    <span data-testid="audit-sentence">
      {s.actor} {s.phrase}
      {s.target && ' '}
      {s.target && (link ? <a href={link}>{s.target}</a> : s.target)}
    </span>
  );
}

/** An opened row: what changed field by field, what was sent, and the request itself. */
function EntryDetail({ row }: { row: AuditView }) {
  const changes = fieldChanges(row.before, row.after);
  return (
    <div className="stack" data-testid="audit-detail">
      {changes.length > 0 ? (
        <Table
          label="What changed"
          rows={changes}
          rowKey={(c) => c.field}
          columns={[
            { head: 'Field', rowHeader: true, cell: (c) => c.field },
            { head: 'Before', cell: (c) => c.before },
            { head: 'After', cell: (c) => c.after },
          ]}
        />
      ) : (
        <p className="muted small">No before and after kept for this action.</p>
      )}
      {row.fields.length > 0 && <p className="small">Fields sent: {row.fields.join(', ')}</p>}
      <p className="muted small">
        <code>{row.action}</code> · status {row.status}
        {row.requestId && ` · request ${row.requestId}`}
        {row.address && ` · from ${row.address}`}
        {row.userAgent && ` · ${row.userAgent}`}
      </p>
    </div>
  );
}

const FILTERS = ['area', 'action', 'person', 'from', 'to', 'show'] as const;
const SHOW: [string, string][] = [
  ['sign-ins', 'Sign-ins and sign-outs'],
  ['all', 'Everything'],
];

/** The instant a local day starts, `days` after `day` (YYYY-MM-DD), for the API's range. */
const localMidnight = (day: string, days = 0) => {
  const d = new Date(`${day}T00:00:00`);
  d.setDate(d.getDate() + days);
  return d.toISOString();
};

/**
 * The audit log: each write as a sentence, newest first, opened for its field changes; filters
 * by area, action, person, days and sign-ins, kept in the address; older pages by keyset.
 */
export function AuditScreen() {
  const [f, setF] = useHashFilters('#/audit', FILTERS);
  const [open, setOpen] = useState<number | null>(null);
  const users = useLoad(() => api<{ data: User[] }>('GET', '/users?limit=200'), 'audit-people');
  const people = users.data?.data ?? [];
  // The `before_id` of each page walked so far; the last is the page shown.
  const [cursors, setCursors] = useState<number[]>([]);
  const filter = (next: Partial<Record<(typeof FILTERS)[number], string>>) => {
    setF(next);
    setCursors([]);
  };
  const qs = new URLSearchParams({ limit: '50' });
  if (f.area) qs.set('target_type', f.area);
  if (f.action) qs.set('action', f.action);
  if (f.person) qs.set('user_id', f.person);
  if (f.from) qs.set('from', localMidnight(f.from));
  if (f.to) qs.set('to', localMidnight(f.to, 1));
  if (f.show !== 'all') qs.set('kind', f.show === 'sign-ins' ? 'sign-ins' : 'writes');
  const before = cursors.at(-1);
  if (before !== undefined) qs.set('before_id', String(before));
  const log = useLoad(
    () => api<{ data: AuditView[]; meta: { next_before_id: number | null } }>('GET', `/audit?${qs}`),
    qs.toString(),
  );
  const next = log.data?.meta.next_before_id ?? null;
  return (
    <section>
      <h1>Audit log</h1>
      <form className="row" aria-label="Audit filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          id="audit-area"
          label="Area"
          all="Everything"
          value={f.area}
          onChange={(v) => filter({ area: v, action: '' })}
          options={AREAS}
        />
        <SelectField
          id="audit-action"
          label="Action"
          all="Any action"
          value={f.action}
          onChange={(v) => filter({ action: v })}
          options={auditActions(f.area || undefined).map(([a, phrase]) => [a, capitalized(phrase)])}
        />
        {people.length > 0 && (
          <SelectField
            id="audit-person"
            label="Person"
            all="Everyone"
            value={f.person}
            onChange={(v) => filter({ person: v })}
            options={people.map((u): [string, string] => [String(u.id), personName(u)])}
          />
        )}
        <InputField
          id="audit-from"
          label="From"
          type="date"
          value={f.from}
          onChange={(v) => filter({ from: v })}
        />
        <InputField id="audit-to" label="To" type="date" value={f.to} onChange={(v) => filter({ to: v })} />
        <SelectField
          id="audit-show"
          label="Show"
          all="Changes"
          value={f.show}
          onChange={(v) => filter({ show: v })}
          options={SHOW}
        />
      </form>
      <LoadedTable
        load={log}
        empty="Nothing recorded."
        testId="audit"
        columns={[
          { head: 'When', cell: (r) => new Date(r.at).toLocaleString() },
          { head: 'Who', cell: (r) => whoOf(r, people) },
          { head: 'What happened', cell: (r) => <Sentence row={r} /> },
          {
            head: ACTIONS,
            cell: (r) => (
              <button
                type="button"
                aria-expanded={open === r.id}
                aria-label={`Details of ${r.summary}`}
                onClick={() => setOpen(open === r.id ? null : r.id)}
              >
                {open === r.id ? 'Close' : 'Details'}
              </button>
            ),
          },
        ]}
        expanded={(r) => open === r.id && <EntryDetail row={r} />}
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
