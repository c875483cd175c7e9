/**
 * Benchmarks that live in their own files and keep their own method (they report quality or
 * scale, not a Podium/bare comparison): each is one scenario here, printed as one JSON line.
 */

import * as clickBatchBench from '../click-batch.ts';
import * as docsSearchBench from '../docs-search.ts';
import type { Scenario } from '../lib/harness.ts';
import * as scaleBench from '../scale.ts';

/** Search quality on the evaluation set (bench/docs-search.ts): recall@1/@3 and MRR, no timing. */
export const docsSearch: Scenario = {
  name: 'docs-search',
  about: 'documentation search recall@1/@3 and MRR on the evaluation set (bench/docs-search.ts)',
  async run() {
    return [{ scenario: 'docs-search', ...(await docsSearchBench.run()) }];
  },
};

/** Tracking data at scale on PostgreSQL (bench/scale.ts): long, so only when named. */
export const scale: Scenario = {
  name: 'scale',
  about: 'tracking data at scale on PostgreSQL (bench/scale.ts); only when named',
  byNameOnly: true,
  async run(ctx) {
    return [{ scenario: 'scale', ...(await scaleBench.run(ctx.log)) }];
  },
};

/** The click batch's statement alone on PGlite (bench/click-batch.ts): CPU per click by batch size. */
export const clickBatch: Scenario = {
  name: 'click-batch',
  about:
    "the click batch's statement alone on PGlite at 20-200 clicks and one, CPU per click (bench/click-batch.ts); by name, alone",
  byNameOnly: true,
  async run(ctx) {
    return [await clickBatchBench.run(ctx.settings.dir, ctx.log)];
  },
};
