import { SETTINGS } from './config.ts';

/** The configuration reference page (docs/configuration.md), generated from the SETTINGS table. */
export function configReference(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default({});
    const shown =
      'secret' in s && s.secret
        ? 'unset'
        : def === undefined
          ? 'unset'
          : `\`${String(def).replace(process.cwd(), '.')}\``;
    return `| \`${s.env}\` | ${s.description}${'secret' in s && s.secret ? ` **Secret:** never logged; may instead be read from the file named by \`${s.env}_FILE\`.` : ''} | ${shown} |`;
  });
  return `---
product: operations
title: Configuration reference
direction: ""
summary: Every environment variable Podium reads, with its meaning and default, generated from the code.
section: Operations
order: 11
---

# Configuration reference

Podium reads its configuration once at start, from environment variables, and refuses to
start when any value is invalid, listing every bad key. Command-line flags (\`--port\`,
\`--data-dir\`, \`--database-url\`) override the matching variables. Secrets come from the
environment or from a file (\`NAME_FILE=/run/secrets/...\`); \`--database-url\` exists for one-off
CLI use, but prefer the variable, since flags show in process lists. This page is generated from the code (\`npm run docs:config\`) and a
test fails when it drifts.

| variable | meaning | default |
| --- | --- | --- |
${rows.join('\n')}
`;
}
