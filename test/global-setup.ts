import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_DIR } from './log-capture.ts';

/** Shapes of secrets Podium mints; none may appear in any log line the suite wrote. */
const SECRET_SHAPES = [
  /\bpd[sap]_[A-Za-z0-9_-]{43}\b/,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/,
  // Password-reset links and TOTP secrets (issue 54).
  /#\/reset\/[A-Za-z0-9_-]{20,}/,
  /otpauth:\/\//,
  /\bsecret=[A-Z2-7]{16,}/,
];
/** Invitation links: never logged, but for the first-run owner link a first start prints (the line after). */
const INVITATION_LINK = /#\/accept\/[A-Za-z0-9_-]{20,}/;
const FIRST_RUN_PRINT = /^first run: owner account .* at$/;

export function setup(): void {
  rmSync(LOG_DIR, { recursive: true, force: true });
}

/** Fails the run when a log written during the whole suite holds a token or credential. */
export function teardown(): void {
  if (!existsSync(LOG_DIR)) return;
  const leaks: string[] = [];
  for (const file of readdirSync(LOG_DIR)) {
    const lines = readFileSync(join(LOG_DIR, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const invitation = INVITATION_LINK.test(line) && !FIRST_RUN_PRINT.test(lines[i - 1] ?? '');
      if (invitation || SECRET_SHAPES.some((re) => re.test(line))) leaks.push(`${file}:${i + 1}`);
    });
  }
  if (leaks.length) {
    // Vitest reports but does not fail on a throwing teardown: set the exit code too.
    process.exitCode = 1;
    throw new Error(`secrets found in test logs at ${leaks.slice(0, 10).join(', ')}`);
  }
}
