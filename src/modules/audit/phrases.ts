/**
 * Audit rows as sentences: "Ana Novak published toplist “Best casinos SE”". Shared by the API
 * (each row's `summary`) and the console (which renders the target as a link), so both say the
 * same thing. Pure data and functions: the console bundles this file.
 */

/** What an audit row's `targetId` refers to, when it names a record that has a name. */
export type TargetKind =
  | 'site'
  | 'brand'
  | 'offer'
  | 'toplist'
  | 'template'
  | 'owner'
  | 'product-type'
  | 'offer-type'
  | 'classification-type'
  | 'user'
  | 'role'
  | 'admin-token'
  | 'program'
  | 'rule'
  | 'postback'
  | 'connection'
  | 'placement'
  | 'booking'
  | 'advertiser'
  | 'product'
  | 'reservation'
  | 'statement'
  | 'creative'
  | 'webhook';

/** How an action reads: the verb phrase after the actor, and what the target id refers to. */
export interface Phrase {
  phrase: string;
  target?: TargetKind;
}

/** The noun of each kind, for a target without a name ("postback #12"). */
export const KIND_NOUN: Record<TargetKind, string> = {
  site: 'site',
  brand: 'brand',
  offer: 'offer',
  toplist: 'toplist',
  template: 'template',
  owner: 'owner',
  'product-type': 'product type',
  'offer-type': 'offer type',
  'classification-type': 'classification type',
  user: 'user',
  role: 'role',
  'admin-token': 'admin token',
  program: 'programme',
  rule: 'compliance rule',
  postback: 'postback',
  connection: 'ad-server connection',
  placement: 'placement',
  booking: 'booking',
  advertiser: 'advertiser',
  product: 'product',
  reservation: 'reservation',
  statement: 'statement',
  creative: 'creative',
  webhook: 'webhook',
};

const p = (phrase: string, target?: TargetKind): Phrase => (target ? { phrase, target } : { phrase });

/**
 * Every audited action by its stored `action`: admin routes as `METHOD /path` below the admin
 * prefix (the stored action carries the prefix), then what the CLI and jobs write. A route
 * missing here still reads as a sentence ({@link phraseOf}), only a plainer one; the audit test
 * fails for any admin write route without its phrase.
 */
export const PHRASES: Record<string, Phrase> = {
  'POST /sites': p('created site', 'site'),
  'PATCH /sites/:id': p('changed site', 'site'),
  'POST /sites/:id/tokens': p('created a site token for site', 'site'),
  'DELETE /sites/:id/tokens/:subId': p('revoked a site token of site', 'site'),
  'PUT /tracking/sites/:id': p('changed the tracking settings of site', 'site'),
  'POST /admin-tokens': p('created admin token', 'admin-token'),
  'DELETE /admin-tokens/:id': p('revoked admin token', 'admin-token'),
  'POST /owners': p('created owner', 'owner'),
  'PATCH /owners/:id': p('changed owner', 'owner'),
  'POST /templates': p('created template', 'template'),
  'PATCH /templates/:id': p('changed template', 'template'),
  'POST /brands': p('created brand', 'brand'),
  'PATCH /brands/:id': p('changed brand', 'brand'),
  'POST /brands/:id/licences': p('added a licence to brand', 'brand'),
  'PATCH /brands/:id/licences/:subId': p('changed a licence of brand', 'brand'),
  'DELETE /brands/:id/licences/:subId': p('removed a licence from brand', 'brand'),
  'POST /offers': p('created offer', 'offer'),
  'PATCH /offers/:id': p('changed offer', 'offer'),
  'POST /offers/:id/trackers': p('added a tracker to offer', 'offer'),
  'PATCH /offers/:id/trackers/:subId': p('changed a tracker of offer', 'offer'),
  'DELETE /offers/:id/trackers/:subId': p('removed a tracker from offer', 'offer'),
  'POST /product-types': p('created product type', 'product-type'),
  'POST /classification-types': p('created classification type', 'classification-type'),
  'POST /offer-types': p('created offer type', 'offer-type'),
  'POST /toplists': p('created toplist', 'toplist'),
  'PATCH /toplists/:id': p('changed toplist', 'toplist'),
  'PUT /toplists/:id/items': p('changed the items of toplist', 'toplist'),
  'POST /toplists/:id/publish': p('published toplist', 'toplist'),
  'POST /toplists/:id/unpublish': p('unpublished toplist', 'toplist'),
  'POST /toplists/:id/compliance': p('checked the draft compliance of toplist', 'toplist'),
  'POST /compliance/rules': p('created compliance rule', 'rule'),
  'PATCH /compliance/rules/:id': p('changed compliance rule', 'rule'),
  'DELETE /compliance/rules/:id': p('deleted compliance rule', 'rule'),
  'POST /tracking/programs': p('created programme', 'program'),
  'PATCH /tracking/programs/:id': p('changed programme', 'program'),
  'POST /tracking/programs/:id/token': p('issued a new postback token for programme', 'program'),
  'PUT /tracking/programs/:id/report': p('set up the report pull of programme', 'program'),
  'DELETE /tracking/programs/:id/report': p('removed the report pull of programme', 'program'),
  'POST /tracking/programs/:id/report/test': p('tested the report pull of programme', 'program'),
  'POST /tracking/programs/:id/report/pull': p('pulled the report of programme', 'program'),
  'POST /tracking/postbacks/:id/replay': p('replayed postback', 'postback'),
  'POST /player-data/export': p('exported the player data of programme', 'program'),
  'POST /player-data/erase': p('erased the player data of programme', 'program'),
  'POST /session': p('signed in to the console'),
  'POST /session/two-factor': p('signed in to the console with two-factor'),
  'POST /session/two-factor/enrol': p('started a two-factor enrolment at sign-in'),
  'DELETE /session': p('signed out of the console'),
  'POST /session/reset': p('asked for a password reset'),
  'POST /session/reset/accept': p('chose a new password from a reset link'),
  'POST /invitations/accept': p('accepted an invitation'),
  'POST /roles': p('created role', 'role'),
  'PATCH /roles/:id': p('changed role', 'role'),
  'DELETE /roles/:id': p('deleted role', 'role'),
  'POST /users': p('invited user', 'user'),
  'PATCH /users/:id': p('changed user', 'user'),
  'POST /users/:id/suspend': p('suspended user', 'user'),
  'POST /users/:id/reactivate': p('reactivated user', 'user'),
  'POST /users/:id/invitation': p('sent a new invitation to user', 'user'),
  'POST /users/:id/password-reset': p('sent a password-reset link to user', 'user'),
  'DELETE /users/:id/two-factor': p('turned off two-factor for user', 'user'),
  'PUT /settings/people': p('changed the sign-in settings'),
  'PATCH /me': p('changed their profile'),
  'POST /me/password': p('changed their password'),
  'DELETE /me/sessions': p('signed out their other sessions'),
  'POST /me/two-factor': p('started setting up two-factor'),
  'POST /me/two-factor/confirm': p('turned on two-factor'),
  'POST /me/two-factor/disable': p('turned off two-factor'),
  'POST /me/two-factor/recovery-codes': p('renewed their recovery codes'),
  'POST /me/tokens': p('created personal token', 'admin-token'),
  'DELETE /me/tokens/:id': p('revoked personal token', 'admin-token'),
  'POST /adserver/connections': p('connected ad server', 'connection'),
  'PATCH /adserver/connections/:id': p('changed ad-server connection', 'connection'),
  'POST /adserver/connections/:id/verify': p('verified ad-server connection', 'connection'),
  'POST /adserver/connections/:id/inventory/sync': p(
    'synced the inventory of ad-server connection',
    'connection',
  ),
  'POST /adserver/connections/:id/reports/pull': p(
    'pulled the delivery reports of ad-server connection',
    'connection',
  ),
  'POST /adserver/connections/:id/forecast': p(
    'asked for a forecast from ad-server connection',
    'connection',
  ),
  'POST /adserver/placements': p('created placement', 'placement'),
  'PUT /adserver/placements/:id/slots': p('changed the slots of placement', 'placement'),
  'DELETE /adserver/placements/:id/slots/:connectionId': p('removed a slot from placement', 'placement'),
  'POST /adserver/bookings': p('created booking', 'booking'),
  'POST /adserver/bookings/:id/lines': p('added a line to booking', 'booking'),
  'PATCH /adserver/bookings/:id/lines/:lineNo': p('changed a line of booking', 'booking'),
  'POST /adserver/bookings/:id/push': p('pushed booking', 'booking'),
  'POST /market/advertisers': p('created advertiser', 'advertiser'),
  'PATCH /market/advertisers/:id': p('changed advertiser', 'advertiser'),
  'POST /market/advertisers/:id/tokens': p('created a token for advertiser', 'advertiser'),
  'DELETE /market/advertisers/:id/tokens/:tokenId': p('revoked a token of advertiser', 'advertiser'),
  'POST /market/products': p('created product', 'product'),
  'PATCH /market/products/:id': p('changed product', 'product'),
  'PUT /market/products/:id/availability': p('changed the availability of product', 'product'),
  'POST /market/products/:id/availability/refresh': p('refreshed the availability of product', 'product'),
  'POST /market/reservations': p('created reservation', 'reservation'),
  'POST /market/reservations/:id/approve': p('approved reservation', 'reservation'),
  // The advertiser portal's writes: `portal METHOD /path` below the portal prefix.
  'portal POST /reservations': p('made reservation', 'reservation'),
  'portal POST /reservations/:id/withdraw': p('withdrew reservation', 'reservation'),
  'portal POST /reservations/:id/lines/:line/creatives': p(
    'uploaded a creative for reservation',
    'reservation',
  ),
  'POST /market/reservations/:id/reject': p('rejected reservation', 'reservation'),
  'POST /market/reservations/:id/statements': p('issued statement', 'statement'),
  'POST /market/statements/:id/reconcile': p('reconciled statement', 'statement'),
  'POST /creatives': p('uploaded creative', 'creative'),
  'POST /creatives/:id/approve': p('approved creative', 'creative'),
  'POST /creatives/:id/reject': p('rejected creative', 'creative'),
  'POST /webhooks': p('created webhook', 'webhook'),
  'PATCH /webhooks/:id': p('changed webhook', 'webhook'),
  'DELETE /webhooks/:id': p('deleted webhook', 'webhook'),
  'POST /webhooks/:id/rotate': p('rotated the signing secret of webhook', 'webhook'),
  'POST /webhooks/:id/test': p('sent a test event to webhook', 'webhook'),
  'compliance.withheld_changed': p('changed what is withheld from toplist', 'toplist'),
  'podium player-data export': p('exported the player data of programme', 'program'),
  'podium player-data erase': p('erased the player data of programme', 'program'),
  'expire hold': p('let the hold of reservation expire', 'reservation'),
};

/** Rows of console sign-in and sign-out: kept, but apart from the writes (the `kind` filter). */
export const SIGN_IN_TARGET_TYPE = 'session';

// Stored actions of admin routes carry the admin prefix: `POST /api/admin/v1/toplists/:id/publish`.
const ROUTE_ACTION = /^([A-Z]+) \/api\/admin\/v1(\/\S*)$/;
const PORTAL_ACTION = /^([A-Z]+) \/api\/portal\/v1(\/\S*)$/;

/**
 * The key of `action` in {@link PHRASES}: the route below the admin prefix, `portal` and the
 * route below the portal's, or the action itself.
 */
export const phraseKey = (action: string): string => {
  const m = ROUTE_ACTION.exec(action);
  if (m) return `${m[1]} ${m[2]}`;
  const portal = PORTAL_ACTION.exec(action);
  return portal ? `portal ${portal[1]} ${portal[2]}` : action;
};

const METHOD_VERB: Record<string, string> = {
  POST: 'made a request to',
  PUT: 'replaced',
  PATCH: 'changed',
  DELETE: 'deleted',
};

/** How `action` reads; an action missing from {@link PHRASES} reads by its method and path. */
export function phraseOf(action: string): Phrase {
  const known = PHRASES[phraseKey(action)];
  if (known) return known;
  const m = ROUTE_ACTION.exec(action);
  return { phrase: m ? `${METHOD_VERB[m[1]!] ?? m[1]} ${m[2]}` : action };
}

/** Actors that are not a person or a token, as a sentence starts with them. */
const SYSTEM_ACTORS: Record<string, string> = {
  cli: 'The command line',
  'system:compliance': 'The compliance guard',
  'job:market-holds': 'The reservation-expiry job',
};

/** Who acted, as a sentence starts: the person's name, the token's, or the system's part. */
export function actorText(actor: string, actorName: string | null): string {
  if (actor.startsWith('user:') && actorName) return actorName;
  if (actor.startsWith('admin-token:') && actorName) return `Admin token “${actorName}”`;
  if (actor.startsWith('advertiser-token:'))
    return `Advertiser token #${actor.slice('advertiser-token:'.length)}`;
  return SYSTEM_ACTORS[actor] ?? actor;
}

/** The parts of a row's sentence: who, what, and the target as written (null when it has none). */
export interface SentenceParts {
  actor: string;
  phrase: string;
  target: string | null;
  kind: TargetKind | null;
}

/** The target as written after the phrase: its name in quotes, else its id. */
function targetText(p: Phrase, targetId: string | null, targetName: string | null): string | null {
  if (!p.target || targetId === null) return null;
  if (targetName) return `“${targetName}”`;
  // Player data is exported or erased for one programme or for all of them.
  if (targetId === 'all') return '(every programme)';
  return `#${targetId}`;
}

export function sentenceParts(row: {
  actor: string;
  actorName: string | null;
  action: string;
  targetId: string | null;
  targetName: string | null;
}): SentenceParts {
  const p = phraseOf(row.action);
  return {
    actor: actorText(row.actor, row.actorName),
    phrase: p.phrase,
    target: targetText(p, row.targetId, row.targetName),
    kind: p.target ?? null,
  };
}

/** The row as one sentence: "Ana Novak published toplist “Best casinos SE”". */
export function sentence(row: Parameters<typeof sentenceParts>[0]): string {
  const s = sentenceParts(row);
  return [s.actor, s.phrase, s.target].filter(Boolean).join(' ');
}

// Where the CLI and jobs file their rows (routes file theirs under their first path segment).
const NON_ROUTE_TARGET_TYPES: Record<string, string> = {
  'compliance.withheld_changed': 'toplists',
  'podium player-data export': 'player-data',
  'podium player-data erase': 'player-data',
  'expire hold': 'market',
};

/** The target type stored with `action`: a route's first path segment, or where a job files it. */
export function targetTypeOf(action: string): string | null {
  if (PORTAL_ACTION.test(action)) return 'market';
  const m = ROUTE_ACTION.exec(action);
  if (m) return m[2]!.split('/')[1] ?? null;
  return NON_ROUTE_TARGET_TYPES[action] ?? null;
}

/** Every action of {@link PHRASES} as stored, `[action, phrase]`; of one target type when given. */
export function auditActions(targetType?: string): [string, string][] {
  return Object.entries(PHRASES)
    .map(([key, p]): [string, string] => {
      const m = /^(portal )?([A-Z]+) (\/\S*)$/.exec(key);
      const prefix = m?.[1] ? '/api/portal/v1' : '/api/admin/v1';
      return [m ? `${m[2]} ${prefix}${m[3]}` : key, p.phrase];
    })
    .filter(([action]) => !targetType || targetTypeOf(action) === targetType);
}

/** The areas of the log (stored target types) as the console's Area filter names them. */
export const AREAS: [string, string][] = [
  ['toplists', 'Toplists'],
  ['brands', 'Brands'],
  ['offers', 'Offers'],
  ['sites', 'Sites'],
  ['templates', 'Templates'],
  ['owners', 'Owners'],
  ['product-types', 'Product types'],
  ['offer-types', 'Offer types'],
  ['classification-types', 'Classification types'],
  ['compliance', 'Compliance rules'],
  ['tracking', 'Tracking'],
  ['player-data', 'Player data'],
  ['webhooks', 'Webhooks'],
  ['adserver', 'Ad servers'],
  ['market', 'Marketplace'],
  ['creatives', 'Creatives'],
  ['admin-tokens', 'Admin tokens'],
  ['users', 'Users'],
  ['invitations', 'Invitations'],
  ['roles', 'Roles'],
  ['me', 'Own profile'],
  ['settings', 'Settings'],
  [SIGN_IN_TARGET_TYPE, 'Sign-ins'],
];
