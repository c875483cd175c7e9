import type { FastifyReply } from 'fastify';

/** 201 Created for an answer that shows a secret once (a token, a key): no cache may keep it. */
export function createdWithSecret(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.status(201).header('cache-control', 'no-store').send(body);
}
