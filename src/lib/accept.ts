import type { FastifyRequest } from 'fastify';

/** True when the request's `Accept` names `type` before JSON (or names no JSON at all). */
function prefers(req: FastifyRequest, type: string): boolean {
  const accept = req.headers.accept;
  if (typeof accept !== 'string') return false;
  const wanted = accept.indexOf(type);
  const json = accept.indexOf('application/json');
  return wanted >= 0 && (json < 0 || wanted < json);
}

/** True when `Accept` puts HTML before JSON: a browser following a link, not a script. */
export const wantsHtml = (req: FastifyRequest): boolean => prefers(req, 'text/html');

/** True when the client asks for CSV in `Accept` (and not for JSON first). */
export const wantsCsv = (req: FastifyRequest): boolean => prefers(req, 'text/csv');
