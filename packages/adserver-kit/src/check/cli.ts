import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { Command, InvalidArgumentError } from 'commander';
import { VERSION } from '../version.ts';
import { type CheckReport, type CheckResult, runChecks } from './index.ts';

// `adserver-check BASE_URL`: the key comes from an environment variable or a hidden prompt,
// never from a flag or the URL, so it does not land in shell history or process lists.

const program = new Command('podium-adserver-check')
  .description('Check a publisher ad server against the Ad Server Integration API contract')
  .version(VERSION)
  .argument('[base-url]', 'base URL of the ad server, e.g. https://ads.example.com/api/v1')
  .option('--base-url <url>', 'same as the argument')
  .option('--api-key-env <name>', 'environment variable holding the API key', 'ADSERVER_API_KEY')
  .option(
    '--limited-key-env <name>',
    'environment variable holding a key without the forecast scope (403 check)',
    'ADSERVER_LIMITED_KEY',
  )
  .option('--allow-writes', 'run the POST /orders scenarios (creates DRAFT orders: use a sandbox)', false)
  .option(
    '--probe-rate-limit <n>',
    'at the end, call GET /health up to n times to see a 429 with Retry-After (spends the budget)',
    (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new InvalidArgumentError('1..100000');
      return n;
    },
  )
  .option('--ca <file>', 'extra trusted CA certificate (PEM) for a sandbox with a private CA')
  .option('--json', 'print the report as JSON (for CI)', false)
  .addHelpText(
    'after',
    `
Examples:
  ADSERVER_API_KEY=… npx podium-adserver-check https://ads.example.com/api/v1
  npx podium-adserver-check https://ads.example.com/api/v1          prompts for the key (hidden)
  ADSERVER_API_KEY=… ADSERVER_LIMITED_KEY=… npx podium-adserver-check https://sandbox.example.com/api/v1 \\
    --allow-writes --ca sandbox-ca.pem --json > report.json

Exit status: 0 when the server conforms, non-zero otherwise.`,
  )
  .showHelpAfterError();

async function promptKey(): Promise<string> {
  if (!process.stdin.isTTY)
    throw new Error('no API key: set the environment variable named by --api-key-env');
  let muted = false;
  const out = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output: out, terminal: true });
  return new Promise((resolve) => {
    rl.question('API key: ', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer.trim());
    });
    muted = true;
  });
}

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const;

function line(r: CheckResult): string {
  const tail = r.status === 'fail' ? `\n        see spec: ${r.spec}` : '';
  const opt = r.required ? '' : ' (optional)';
  return `${MARK[r.status]}  ${r.id}${opt} — ${r.detail}${tail}`;
}

function summary(rep: CheckReport): string {
  const { pass, fail, skip } = rep.counts;
  return `\n${rep.ok ? 'CONFORMS' : 'DOES NOT CONFORM'}: ${pass} passed, ${fail} failed, ${skip} skipped (${rep.baseUrl})\n`;
}

program.action(async (arg: string | undefined, o) => {
  const baseUrl: string = arg ?? o.baseUrl ?? program.error('a base URL is required');
  const parsed = URL.parse(baseUrl) ?? program.error(`not a URL: ${baseUrl}`);
  if (parsed.username || parsed.password) program.error('credentials never go in the URL');
  const apiKey = process.env[o.apiKeyEnv] || (await promptKey());
  if (!apiKey) program.error('empty API key');
  let done = 0;
  const progress = process.stderr.isTTY && !o.json;
  const report = await runChecks({
    baseUrl,
    apiKey,
    allowWrites: o.allowWrites,
    rateLimitProbe: o.probeRateLimit,
    limitedKey: process.env[o.limitedKeyEnv] || undefined,
    ca: o.ca ? readFileSync(o.ca) : undefined,
    onResult: (r) => {
      done++;
      if (progress) process.stderr.write(`\r\x1b[K[${done}] ${r.id}`);
      if (!o.json) {
        if (progress) process.stderr.write('\r\x1b[K');
        process.stdout.write(`${line(r)}\n`);
      }
    },
  });
  process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : summary(report));
  process.exitCode = report.ok ? 0 : 1;
});

program.parseAsync().catch((err: Error) => {
  process.stderr.write(`podium-adserver-check: ${err.message}\n`);
  process.exit(2);
});
