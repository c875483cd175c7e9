import { evaluate, parse as parseJson } from '@humanwhocodes/momoa';
import { AppError } from '../../lib/errors.ts';
import { scrub } from '../../lib/scrub.ts';
import { isPlayerId, MAX_PLAYER_ID, PRINTABLE, storableText as storable } from '../../lib/text.ts';

/** The fields Podium reads from a postback, under their canonical names. */
export const POSTBACK_FIELDS = [
  'click_id',
  'event',
  'transaction_id',
  'amount',
  'currency',
  'player_id',
] as const;
export type PostbackField = (typeof POSTBACK_FIELDS)[number];

const MAX_FIELDS = 50;
const MAX_KEY = 64;
const MAX_VALUE = 512;
/** Raw bodies that could not be parsed are logged up to this many characters. */
const MAX_LOGGED_BODY = 8192;
const SECRET_KEY = /token|secret|passw|api[_-]?key|auth|signature/i;

const badField = (field: string, message: string) =>
  new AppError('bad_request', `${field}: ${message}`, { field });

/** A postback's parameters: query string and body merged (the body wins), all values text. */
export type Fields = Map<string, string>;

function put(out: Fields, key: string, value: unknown): void {
  if (key.length > MAX_KEY)
    throw badField(key.slice(0, MAX_KEY), `parameter names are at most ${MAX_KEY} characters`);
  if (Array.isArray(value)) throw badField(key, 'must be given once');
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') throw badField(key, 'must be a string or a number');
  if (value.length > MAX_VALUE) throw badField(key, `must be at most ${MAX_VALUE} characters`);
  out.set(key, value);
  if (out.size > MAX_FIELDS)
    throw new AppError('bad_request', `A postback carries at most ${MAX_FIELDS} parameters`);
}

/**
 * A JSON object's members, each given once: `JSON.parse` would keep the last of a repeated key,
 * so the body is read as a syntax tree (momoa) and a repeat is refused like a repeated query or
 * form parameter.
 */
function jsonFields(raw: string): Record<string, unknown> {
  let root: ReturnType<typeof parseJson>['body'];
  try {
    root = parseJson(raw).body;
  } catch {
    throw badField('body', 'is not valid JSON');
  }
  if (root.type !== 'Object') throw badField('body', 'must be a JSON object');
  const out: Record<string, unknown> = Object.create(null);
  for (const member of root.members) {
    const key = member.name.type === 'String' ? member.name.value : member.name.name;
    if (Object.hasOwn(out, key)) throw badField(key, 'must be given once');
    out[key] = evaluate(member.value);
  }
  return out;
}

/** Parses the body by content type: JSON object, form or empty. Throws 400/415 on anything else. */
export function parseBody(contentType: string | undefined, raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') return jsonFields(raw);
  if (type === 'application/x-www-form-urlencoded') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw)) {
      const prev = out[k];
      out[k] = prev === undefined ? v : [prev, v].flat();
    }
    return out;
  }
  throw new AppError(
    'unsupported_media_type',
    'Send the postback as a query string, application/x-www-form-urlencoded or application/json',
  );
}

/** Query and body parameters merged into one map, bounded in count and size. */
export function mergeFields(query: Record<string, unknown>, body: Record<string, unknown>): Fields {
  const out: Fields = new Map();
  for (const [k, v] of Object.entries(query)) put(out, k, v);
  for (const [k, v] of Object.entries(body)) put(out, k, v);
  return out;
}

/**
 * A copy of some parameters fit for the append-only log: secret-looking names redacted,
 * player ids replaced by `pseudonymise`, every other value scrubbed of token shapes.
 */
export function redactForLog(
  params: Record<string, unknown>,
  playerKeys: ReadonlySet<string>,
  pseudonymise: (v: string) => string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params).slice(0, MAX_FIELDS * 2)) {
    const key = storable(k.slice(0, MAX_KEY));
    if (SECRET_KEY.test(k)) out[key] = '[redacted]';
    else if (playerKeys.has(k) && typeof v === 'string') out[key] = pseudonymise(v);
    else if (typeof v === 'string') out[key] = storable(scrub(v.slice(0, MAX_VALUE)));
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) out[key] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
      out[key] = v.slice(0, MAX_FIELDS).map((x: string) => storable(scrub(x.slice(0, MAX_VALUE))));
    else out[key] = '[not a scalar]';
  }
  return out;
}

/** The raw text of an unparseable body as logged: bounded and scrubbed of token shapes. */
export function rawBodyForLog(raw: string): string {
  return storable(scrub(raw.slice(0, MAX_LOGGED_BODY)));
}

/** A validated postback. */
export interface Postback {
  clickId: string | null;
  event: string;
  transactionId: string;
  amount: string | null;
  currency: string | null;
  playerId: string | null;
}

const DECIMAL = /^-?\d{1,14}(\.\d{1,4})?$/;

/**
 * Reads the canonical fields through the programme's own parameter names and validates them.
 * Throws a 400 naming the field (the programme's name for it).
 */
export function readPostback(fields: Fields, paramMap: Record<string, string>): Postback {
  const name = (f: PostbackField) => paramMap[f] ?? f;
  const get = (f: PostbackField) => {
    const v = fields.get(name(f))?.trim();
    return v === undefined || v === '' ? null : v;
  };
  const transactionId = get('transaction_id');
  if (transactionId === null) throw badField(name('transaction_id'), 'is required');
  if (transactionId.length > 128 || !PRINTABLE.test(transactionId))
    throw badField(name('transaction_id'), 'must be 1 to 128 printable characters');
  const event = get('event')?.toLowerCase() ?? null;
  if (event === null) throw badField(name('event'), 'is required');
  if (!/^[a-z0-9_.-]{1,32}$/.test(event))
    throw badField(name('event'), 'must be 1 to 32 letters, digits, dots, dashes or underscores');
  const clickId = get('click_id');
  if (clickId !== null && (clickId.length > 64 || !PRINTABLE.test(clickId)))
    throw badField(name('click_id'), 'must be at most 64 printable characters');
  const amount = get('amount');
  if (amount !== null && !DECIMAL.test(amount))
    throw badField(name('amount'), 'must be a decimal number such as 25.00 (up to 4 decimals)');
  const currency = get('currency')?.toUpperCase() ?? null;
  if (currency !== null && !/^[A-Z]{3}$/.test(currency))
    throw badField(name('currency'), 'must be an ISO 4217 code such as EUR');
  const playerId = get('player_id');
  if (playerId !== null && !isPlayerId(playerId))
    throw badField(name('player_id'), `must be at most ${MAX_PLAYER_ID} printable characters`);
  return { clickId, event, transactionId, amount, currency, playerId };
}

const LOG_MARKS = ['[redacted]', '\uFFFD'];

/**
 * Why a logged postback cannot be processed again as it arrived, or null when it can: a value the
 * log cut short or replaced (a longer value or name was refused, a nested one too, so the copy
 * would not be judged like the original), or a field the programme reads (`paramMap`) that the log
 * redacted or that held a NUL.
 */
export function replayProblem(
  params: Record<string, unknown>,
  rawBody: string | null,
  paramMap: Record<string, string>,
): string | null {
  if (rawBody !== null && rawBody.length >= MAX_LOGGED_BODY) return 'the logged body was cut short';
  const read = new Set(POSTBACK_FIELDS.map((f) => paramMap[f] ?? f));
  for (const [key, value] of Object.entries(params)) {
    if (key.length >= MAX_KEY) return `the parameter name ${key.slice(0, 20)}… was cut short in the log`;
    if (value === '[not a scalar]') return `${key}: the log holds no value it can replay`;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string') continue;
      if (v.length >= MAX_VALUE) return `${key}: the logged value was cut short`;
      if (read.has(key) && LOG_MARKS.some((m) => v.includes(m)))
        return `${key}: the logged value was redacted or altered`;
    }
  }
  return null;
}
