/** A readiness check: resolves to null when healthy, or a short reason (no data, no secrets). */
export type ReadinessCheck = () => Promise<string | null>;

const CHECK_TIMEOUT_MS = 2000;

/** The parts `/readyz` asks; modules register their own (the click buffer, for one). */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  register(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  /** Runs every check with a timeout; `failing` names the parts that are not ready. */
  async run(): Promise<{ ready: boolean; checks: Record<string, string> }> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
        });
        try {
          const problem = await Promise.race([check().catch(() => 'check failed'), timeout]);
          return [name, problem ?? 'ok'] as const;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    return { ready: entries.every(([, v]) => v === 'ok'), checks };
  }
}
