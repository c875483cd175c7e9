import type { Db } from '../../db/index.ts';
import { type AuditEntry, type AuditFilter, AuditRepository, type AuditRow } from './repository.ts';

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

  list(filter: AuditFilter): Promise<AuditRow[]> {
    return this.repo.list(filter);
  }
}
