import type {
  FastifyInstance,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
  preValidationAsyncHookHandler,
} from 'fastify';
import { AppError, notFound } from '../lib/errors.ts';
import { authOf } from './auth.ts';

/** Kinds of object whose site a restriction checks: a site itself or something that belongs to one or more. */
export type SiteTarget = 'site' | 'toplist' | 'webhook' | 'placement' | 'booking';

/**
 * Finds the site an object belongs to: undefined when the object does not exist, null when it
 * spans every site, a list when it belongs to several (a booking's lines), each of which the
 * person must hold.
 */
export interface SiteResolver {
  siteOf(target: SiteTarget, id: number | string): Promise<number | readonly number[] | null | undefined>;
}

/**
 * How an admin route touches sites, for a person limited to some:
 * - `none`: site-less data (brands, offers, templates, one's own profile): the role decides alone;
 * - `deny`: the route spans every site and has no per-site filter: refused 403 `site_restricted`;
 * - `list`: the handler narrows its rows (and counts) to {@link siteScopeOf};
 * - `object`: the `:param` names an object of `target`; one of another site answers 404 as if absent;
 *   with `body`, that body field (when sent) must also name one of the person's sites;
 * - `body`: a create whose `field` names the site it goes into (required when `required`).
 */
export type SitePolicy =
  | { kind: 'none' }
  | { kind: 'deny' }
  | { kind: 'list' }
  | { kind: 'object'; target: SiteTarget; param: string; entity: string; body?: string }
  | { kind: 'body'; field: string; required: boolean };

/** The sites the request's admin is limited to; undefined: every site. */
export function siteScopeOf(request: FastifyRequest): readonly number[] | undefined {
  return request.admin?.siteIds ?? undefined;
}

const restricted = (field: string | undefined, message: string) =>
  new AppError('site_restricted', message, field ? { field } : undefined);

const SPANS = 'You are limited to some sites and this route spans every site: ask someone who is not';

// An id as the route's schema would take it; anything else is left to validation's 422.
const ID = /^[1-9][0-9]{0,9}$|^[a-z]{3}_[0-9A-Z]{26}$/;

/** Refuses a body field naming no site or another site than the person's (403 naming the field). */
function bodyCheck(field: string, required: boolean): preHandlerAsyncHookHandler {
  return async (request) => {
    const sites = siteScopeOf(request);
    if (!sites) return;
    const value = ((request.body ?? {}) as Record<string, unknown>)[field];
    if (value === undefined && !required) return;
    if (typeof value === 'number' && sites.includes(value)) return;
    throw restricted(
      field,
      value === undefined || value === null
        ? `${field}: you are limited to sites ${sites.join(', ')}: name one of them`
        : `${field}: you are limited to sites ${sites.join(', ')}, not site ${String(value)}`,
    );
  };
}

/** Answers 404 for an object of another site, before validation, so its id leaks nothing. */
function objectCheck(
  target: SiteTarget,
  param: string,
  entity: string,
  resolver: SiteResolver,
): preValidationAsyncHookHandler {
  return async (request) => {
    const sites = siteScopeOf(request);
    if (!sites) return;
    const raw = String((request.params as Record<string, unknown>)[param] ?? '');
    if (!ID.test(raw) || (/^[0-9]+$/.test(raw) && Number(raw) > 2147483647)) return;
    const site = await resolver.siteOf(target, /^[0-9]+$/.test(raw) ? Number(raw) : raw);
    if (site === undefined) return; // A missing object is left to the handler's own 404.
    const held = site !== null && [site].flat().every((s) => sites.includes(s));
    // One of another site looks the same as a missing one.
    if (!held) throw notFound(entity);
  };
}

const denyCheck: onRequestAsyncHookHandler = async (request) => {
  if (siteScopeOf(request)) throw restricted(undefined, SPANS);
};

const hooks = <T>(existing: T | T[] | undefined, added: T): T[] => [...[existing ?? []].flat(), added] as T[];

/**
 * Applies site restrictions to every admin route of `scope`, in one place: each route's policy
 * comes from `policyOf` (keyed by method and path below `prefix`) and runs right after
 * authentication: a refusal of the whole route at once, an object's site before validation, a
 * body's site after it. A route authenticated as an admin without a policy cannot be
 * registered, so a new route cannot forget to say how it touches sites.
 */
export function restrictToSites(
  scope: FastifyInstance,
  opts: { prefix: string; resolver: SiteResolver; policyOf: (key: string) => SitePolicy | undefined },
): void {
  scope.addHook('onRoute', (route) => {
    const auth = authOf(route);
    if (!auth || auth.kind === 'site') return;
    const path = route.url.startsWith(opts.prefix) ? route.url.slice(opts.prefix.length) : route.url;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const key = `${method} ${path}`;
      const policy = opts.policyOf(key);
      if (!policy) throw new Error(`${key}: declare how it touches sites in the site policies`);
      // The auth hook runs first (route onRequest hooks run in order), so `request.admin` is set.
      if (policy.kind === 'deny') route.onRequest = hooks(route.onRequest, denyCheck);
      if (policy.kind === 'object') {
        const check = objectCheck(policy.target, policy.param, policy.entity, opts.resolver);
        route.preValidation = hooks(route.preValidation, check);
        if (policy.body) route.preHandler = hooks(route.preHandler, bodyCheck(policy.body, false));
      }
      if (policy.kind === 'body')
        route.preHandler = hooks(route.preHandler, bodyCheck(policy.field, policy.required));
    }
  });
}
