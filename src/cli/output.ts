import { readFileSync, statSync } from 'node:fs';
import type { DemoTokens } from '../modules/catalog/demo.ts';

/** Largest import file accepted, in bytes. */
const MAX_IMPORT_BYTES = 200 * 1024 * 1024;

/** The tokens of `podium demo`, for people. */
export function demoText(t: DemoTokens): string {
  return [
    `Admin token:  ${t.adminToken}`,
    ...t.siteTokens.map((s) => `Site token:   ${s.token}   (site ${s.siteId}, ${s.domain})`),
    'Tokens are shown only now; run `podium demo` again for fresh ones.',
  ].join('\n');
}

/** What `npm start` prints once the server listens. */
export function startBanner(
  url: string,
  demo: DemoTokens | null,
  docsUrl?: string,
  adServerUrl?: string,
): string {
  const lines = [
    '',
    `Podium is running at ${url}`,
    `  Toplist API   ${url}/api/v1/toplists`,
    `  OpenAPI       ${url}/api/v1/openapi.json`,
    `  Admin API     ${url}/api/admin/v1`,
    `  Console       ${url}/console/   (sign in with your email, or an admin token)`,
    ...(docsUrl ? [`  Docs          ${docsUrl}   (llms.txt, MCP at ${docsUrl}mcp)`] : []),
    `  Health        ${url}/readyz   metrics ${url}/metrics`,
    ...(adServerUrl
      ? [
          `  Ad server     ${adServerUrl}   (the marketplace demo's reference ad server; console: Products, Reservations, Statements)`,
        ]
      : []),
  ];
  const site = demo?.siteTokens[0];
  if (demo && site) {
    lines.push(
      '',
      demoText(demo),
      '',
      'Try:',
      `  curl -H "Authorization: Bearer ${site.token}" "${url}/api/v1/toplists?per_page=5"`,
    );
  } else {
    lines.push('', 'Create tokens with `npx podium token create --site <id>` or `--admin`.');
  }
  return `${lines.join('\n')}\n`;
}

/** Reads and parses an import file, with errors that name the file. */
export function readImportFile(file: string): unknown {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new Error(`${file}: no such file`);
  }
  if (size > MAX_IMPORT_BYTES) throw new Error(`${file}: larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB`);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not valid JSON (${(e as Error).message})`);
  }
}

/** `[#####-----] 5/10`: a progress bar for commands that work through a list. */
export function progressBar(done: number, total: number, width = 20): string {
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
}
