import type { Db } from '../../db/index.ts';
import { phraseOf, sentence } from './phrases.ts';
import {
  type AuditEntry,
  type AuditFilter,
  AuditRepository,
  type AuditRow,
  type NameRefs,
  type Names,
} from './repository.ts';

/** An audit row as read: with who acted and what it touched by name, and the row as a sentence. */
export interface AuditView extends AuditRow {
  /** The person's display name or the admin token's name; null for the CLI and jobs, or when gone. */
  actorName: string | null;
  /** The target's name (toplist, brand, site, webhook…); null when it has none or no longer exists. */
  targetName: string | null;
  /** "Ana Novak published toplist “Best casinos SE”". */
  summary: string;
}

const ACTOR = /^(user|admin-token):(\d+)$/;

/** The records a page of rows names: each row's actor and its target, by kind. */
function refsOf(rows: readonly AuditRow[]): NameRefs {
  const refs: NameRefs = {};
  const want = (kind: keyof NameRefs, id: string) => {
    let ids = refs[kind];
    if (!ids) {
      ids = new Set();
      refs[kind] = ids;
    }
    ids.add(id);
  };
  for (const r of rows) {
    const actor = ACTOR.exec(r.actor);
    if (actor) want(actor[1] === 'user' ? 'user' : 'admin-token', actor[2]!);
    const kind = phraseOf(r.action).target;
    if (kind && r.targetId !== null) want(kind, r.targetId);
  }
  return refs;
}

function view(r: AuditRow, names: Names): AuditView {
  const actor = ACTOR.exec(r.actor);
  const actorName = actor ? (names.get(`${actor[1]}:${actor[2]}`) ?? null) : null;
  const kind = phraseOf(r.action).target;
  const targetName = kind && r.targetId !== null ? (names.get(`${kind}:${r.targetId}`) ?? null) : null;
  return { ...r, actorName, targetName, summary: sentence({ ...r, actorName, targetName }) };
}

/** Appends to and reads the audit log. Writes never fail the audited request. */
export class AuditLog {
  private readonly repo: AuditRepository;

  constructor(
    db: Db,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.repo = new AuditRepository(db);
  }

  async record(entry: AuditEntry): Promise<void> {
    try {
      await this.repo.insert(entry);
    } catch (err) {
      this.onError(err);
    }
  }

  /** A page of rows, named: the actors and targets of the whole page in one query. */
  async list(filter: AuditFilter): Promise<AuditView[]> {
    const rows = await this.repo.list(filter);
    const names = await this.repo.names(refsOf(rows));
    return rows.map((r) => view(r, names));
  }
}
