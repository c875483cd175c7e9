/**
 * The one list of benchmark scenarios, in the order `npm run bench` runs them. A new scenario is
 * a file in this folder exporting a `Scenario`, added here. `npm run bench` with no name runs
 * every scenario but those marked `byNameOnly`.
 */
import type { Scenario } from '../lib/harness.ts';
import { brands, byId, bySlug, bySlugGzip, list, listGzip, resolve } from './delivery.ts';
import { docs } from './docs.ts';
import { firstStart } from './first-start.ts';
import { idle } from './idle.ts';
import { clickBatch, docsSearch, scale } from './others.ts';
import { go, imp, postbacks, readsWithClicks } from './tracking.ts';

export const SCENARIOS: Scenario[] = [
  firstStart,
  idle,
  bySlug,
  bySlugGzip,
  byId,
  resolve,
  list,
  listGzip,
  brands,
  go,
  imp,
  postbacks,
  readsWithClicks,
  docs,
  docsSearch,
  scale,
  clickBatch,
];
