import { AppError } from './errors.ts';

const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

interface PgLikeError {
  code?: string;
  constraint?: string;
  table?: string;
}

/**
 * Translates constraint violations into client errors naming the field, using PostgreSQL's
 * default constraint names (`<table>_<column>_key`, `<table>_<column>_fkey`). Returns undefined
 * for anything else, which stays a 500.
 */
export function fromDbError(err: unknown, fields: Record<string, string> = {}): AppError | undefined {
  const e = err as PgLikeError;
  if (!e || typeof e.code !== 'string' || typeof e.constraint !== 'string') return undefined;
  const table = e.table ?? '';
  const bare = e.constraint.startsWith(`${table}_`) ? e.constraint.slice(table.length + 1) : e.constraint;
  if (e.code === '23505') {
    const field = fields[e.constraint] ?? camel(bare.replace(/_key$/, ''));
    return new AppError('conflict', `${field}: this value is already taken`, { field });
  }
  if (e.code === '23503') {
    const field = fields[e.constraint] ?? camel(bare.replace(/_fkey$/, ''));
    return new AppError('validation_failed', `${field}: refers to a record that does not exist`, { field });
  }
  if (e.code === '23514') {
    const field = fields[e.constraint] ?? 'body';
    return new AppError('validation_failed', `${field}: violates the rule ${e.constraint}`, { field });
  }
  return undefined;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** Whether an error means "the database is unreachable right now" (a 503), not a bug (a 500). */
export function isDbUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  return (
    typeof e.message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
      e.message,
    )
  );
}
