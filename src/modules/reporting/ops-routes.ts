import type { FastifyInstance } from 'fastify';
import { wantsCsv } from '../../lib/accept.ts';
import { camelKeys } from '../../lib/camel.ts';
import { IdParams } from '../../lib/schema-parts.ts';
import { type Authenticator, adminArea } from '../../plugins/auth.ts';
import { siteScopeOf } from '../../plugins/site-scope.ts';
import type { Scope } from '../access/scopes.ts';
import type { OperatorAggregates } from './aggregates.ts';
import type { AggregateBackfills } from './backfills.ts';
import {
  BackfillList,
  BackfillOne,
  ConversionList,
  ConversionQuery,
  LogIdParams,
  PostbackList,
  PostbackQuery,
  PullInput,
  ReplayAnswer,
  ReportTestAnswer,
} from './ops-schemas.ts';
import type { ReportingService } from './service.ts';

/**
 * The affiliate manager's tools under /api/admin/v1: conversions (JSON or CSV), the raw postback
 * log and replay, and the operator report test, pull (queued backfill) and backfill progress.
 */
export async function registerTrackingOps(
  scope: FastifyInstance,
  {
    reporting,
    aggregates,
    backfills,
    tokens,
  }: {
    reporting: ReportingService;
    aggregates: OperatorAggregates;
    backfills: AggregateBackfills;
    tokens: Authenticator<Scope>;
  },
): Promise<void> {
  const { app, read, write } = adminArea(scope, tokens, { read: 'tracking:read', write: 'tracking:write' });
  const records = reporting.records;

  app.get(
    '/tracking/conversions',
    {
      ...read,
      schema: {
        summary: 'Conversions, newest first (JSON, or CSV with format=csv or Accept: text/csv)',
        querystring: ConversionQuery,
        response: { 200: ConversionList },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const query = { ...camelKeys(q), siteIds: siteScopeOf(req) };
      if (q.format === 'json' || (q.format !== 'csv' && !wantsCsv(req))) return records.conversions(query);
      const { csv, from, to } = await records.conversionsCsv(query);
      return (
        reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="podium-conversions-${from}-${to}.csv"`)
          // A CSV document, sent as it is (the response schema describes the JSON answer).
          .send(csv as never)
      );
    },
  );

  app.get(
    '/tracking/postbacks',
    {
      ...read,
      schema: {
        summary: 'The raw postback log, newest first, each postback with every outcome',
        querystring: PostbackQuery,
        response: { 200: PostbackList },
      },
    },
    (req) => records.postbacks(camelKeys(req.query)),
  );

  app.post(
    '/tracking/postbacks/:id/replay',
    {
      ...write,
      schema: {
        summary: "Process a logged postback again with its programme's current parameter mapping",
        params: LogIdParams,
        response: { 200: ReplayAnswer },
      },
    },
    async (req) => {
      const { result, before } = await records.replay(req.params.id);
      req.audit = { targetId: req.params.id, before: before ?? null, after: result };
      return { data: result };
    },
  );

  const base = '/tracking/programs/:id/report';
  app.post(
    `${base}/test`,
    {
      ...write,
      schema: {
        summary: 'Pull yesterday from the operator once, now; judged like the scheduled pull, nothing stored',
        params: IdParams,
        response: { 200: ReportTestAnswer },
      },
    },
    async (req, reply) =>
      reply.header('cache-control', 'no-store').send({ data: await aggregates.testDay(req.params.id) }),
  );
  app.post(
    `${base}/pull`,
    {
      ...write,
      schema: {
        summary: "Queue a backfill of the operator's daily report for [from, to], one pull per day",
        params: IdParams,
        body: PullInput,
        response: { 202: BackfillOne },
      },
    },
    async (req, reply) =>
      reply.status(202).send({ data: await backfills.request(req.params.id, req.body.from, req.body.to) }),
  );
  app.get(
    `${base}/backfills`,
    {
      ...read,
      schema: {
        summary: "The programme's requested backfills with their progress, newest first",
        params: IdParams,
        response: { 200: BackfillList },
      },
    },
    async (req) => ({ data: await backfills.list(req.params.id) }),
  );
}
