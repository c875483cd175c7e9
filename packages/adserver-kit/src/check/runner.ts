import { randomBytes } from 'node:crypto';
import type { HttpClient, HttpResult } from './http.ts';

/** Outcome of one check. */
export interface CheckResult {
  id: string;
  status: 'pass' | 'fail' | 'skip';
  /** Required checks decide the exit code; optional ones only inform. */
  required: boolean;
  detail: string;
  /** Where the rule lives in the contract, shown with failures. */
  spec: string;
}

/** Shared state of one run: the client, what earlier scenarios learned, and the results. */
export class Run {
  readonly results: CheckResult[] = [];
  /** Every answer seen, for the run-wide checks (secrets, error body shape). */
  readonly seen: { what: string; res: HttpResult }[] = [];
  readonly runId = randomBytes(4).toString('hex');
  timezone: string | undefined;
  forecastCapable: boolean | undefined;
  slots: { inventory_id: string; sizes: string[]; status?: string }[] = [];

  constructor(
    readonly http: HttpClient,
    readonly secrets: string[],
    readonly onResult: (r: CheckResult) => void = () => {},
  ) {}

  /** Sends a request and remembers the answer; a transport failure resolves to null. */
  async call(
    what: string,
    method: 'GET' | 'POST',
    path: string,
    opts?: Parameters<HttpClient['send']>[2],
  ): Promise<HttpResult | null> {
    try {
      const res = await this.http.send(method, path, opts);
      this.seen.push({ what, res });
      return res;
    } catch (err) {
      this.lastError = (err as Error).message;
      return null;
    }
  }

  lastError = '';

  record(id: string, spec: string, status: CheckResult['status'], detail: string, required = true): void {
    const r = { id, status, required, detail: this.scrub(detail), spec };
    this.results.push(r);
    this.onResult(r);
  }

  pass(id: string, spec: string, detail = 'ok', required = true): void {
    this.record(id, spec, 'pass', detail, required);
  }

  fail(id: string, spec: string, detail: string, required = true): void {
    this.record(id, spec, 'fail', detail, required);
  }

  skip(id: string, spec: string, detail: string, required = true): void {
    this.record(id, spec, 'skip', detail, required);
  }

  /** Records pass when `problems` is empty, else fail listing them. */
  expect(id: string, spec: string, problems: string[], okDetail = 'ok', required = true): boolean {
    if (problems.length) this.fail(id, spec, problems.slice(0, 5).join('; '), required);
    else this.pass(id, spec, okDetail, required);
    return problems.length === 0;
  }

  /** Never print a key the checker holds, whatever the server sent back. */
  scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) if (s) out = out.split(s).join('[redacted]');
    return out;
  }

  /** A short description of an answer for a failure line. */
  describe(res: HttpResult | null): string {
    if (!res) return `no answer (${this.lastError || 'transport error'})`;
    const code = (res.json as { code?: unknown } | undefined)?.code;
    return `HTTP ${res.status}${typeof code === 'string' ? ` ${code}` : ''}`;
  }
}
