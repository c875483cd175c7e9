import { type Config, SETTINGS } from './config.ts';

/** The areas of the reference page, in page order: one h2 and one table each. */
const AREAS = [
  'Server and network',
  'Database',
  'Logs and metrics',
  'Documentation server',
  'Several processes and Redis',
  'Secrets',
  'Tracking',
  'Operator reports and reconciliation',
  'Outbound calls and ad servers',
  'Marketplace creatives',
  'Single sign-on',
] as const;

/** The area of every setting (the compiler refuses a setting without one). */
const AREA_OF: Record<keyof Config, (typeof AREAS)[number]> = {
  host: 'Server and network',
  port: 'Server and network',
  publicUrl: 'Server and network',
  trustProxy: 'Server and network',
  bodyLimitBytes: 'Server and network',
  authFailureLimit: 'Server and network',
  authBlockSeconds: 'Server and network',
  databaseUrl: 'Database',
  dataDir: 'Database',
  databaseReadUrl: 'Database',
  slowStatementMs: 'Database',
  demoOnEmpty: 'Database',
  ownerEmail: 'Server and network',
  smtpUrl: 'Server and network',
  mailFrom: 'Server and network',
  logLevel: 'Logs and metrics',
  metricsToken: 'Logs and metrics',
  docsBase: 'Documentation server',
  docsPort: 'Documentation server',
  docsRateLimit: 'Documentation server',
  workers: 'Several processes and Redis',
  redisUrl: 'Several processes and Redis',
  redisPrefix: 'Several processes and Redis',
  secretKeys: 'Secrets',
  pseudonymKey: 'Secrets',
  countryHeader: 'Tracking',
  clickBufferMax: 'Tracking',
  retentionClicksDays: 'Tracking',
  retentionPostbacksDays: 'Tracking',
  retentionConversionsDays: 'Tracking',
  trackingArchiveDir: 'Tracking',
  aggregateWindowDays: 'Operator reports and reconciliation',
  aggregatePullMinutes: 'Operator reports and reconciliation',
  reconcileThresholdPercent: 'Operator reports and reconciliation',
  outboundConnectTimeoutMs: 'Outbound calls and ad servers',
  outboundTimeoutMs: 'Outbound calls and ad servers',
  outboundMaxBytes: 'Outbound calls and ad servers',
  outboundAddress: 'Outbound calls and ad servers',
  outboundLoopbackAllow: 'Outbound calls and ad servers',
  adserverReportMinutes: 'Outbound calls and ad servers',
  adserverTrailingDays: 'Outbound calls and ad servers',
  marketHoldMinutes: 'Outbound calls and ad servers',
  marketForecastMaxAgeMinutes: 'Outbound calls and ad servers',
  creativeStore: 'Marketplace creatives',
  creativeMaxBytes: 'Marketplace creatives',
  creativeBaseUrl: 'Marketplace creatives',
  creativeS3Bucket: 'Marketplace creatives',
  creativeS3Region: 'Marketplace creatives',
  creativeS3Endpoint: 'Marketplace creatives',
  creativeS3Prefix: 'Marketplace creatives',
  ssoIssuer: 'Single sign-on',
  ssoClientId: 'Single sign-on',
  ssoClientSecret: 'Single sign-on',
  ssoScopes: 'Single sign-on',
  ssoAllowedDomains: 'Single sign-on',
  ssoGroupsClaim: 'Single sign-on',
  ssoRoleMap: 'Single sign-on',
  ssoDefaultRole: 'Single sign-on',
};

/** The configuration reference page (docs/configuration.md), generated from the SETTINGS table, one section per area. */
export function configReference(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default({});
    const shown =
      'secret' in s && s.secret
        ? 'unset'
        : 'defaultText' in s
          ? s.defaultText
          : def === undefined || (Array.isArray(def) && !def.length)
            ? 'unset'
            : `\`${String(def).replace(process.cwd(), '.')}\``;
    const row = `| \`${s.env}\` | ${s.description}${'secret' in s && s.secret ? ` **Secret:** never logged; may instead be read from the file named by \`${s.env}_FILE\`.` : ''} | ${shown} |`;
    return { area: AREA_OF[s.key], row };
  });
  const sections = AREAS.map(
    (area) =>
      `## ${area}\n\n| variable | meaning | default |\n| --- | --- | --- |\n${rows
        .filter((r) => r.area === area)
        .map((r) => r.row)
        .join('\n')}\n`,
  );
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

${sections.join('\n')}`;
}
