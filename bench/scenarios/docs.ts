/** The documentation server's MCP search (its own bench file, bench/docs.ts). */
import * as docsBench from '../docs.ts';
import type { Scenario } from '../lib/harness.ts';

export const docs: Scenario = {
  name: 'docs',
  about: 'MCP search_docs against a bare server, and in-process search latency (bench/docs.ts)',
  async run() {
    return [{ scenario: 'docs', ...(await docsBench.run()) }];
  },
};
