/**
 * Advanced DaemonSet bench: the Flotilla agent beside kruise-manager as the DaemonSet controller
 * of a harness cluster of N kwok nodes. Runs alternate kruise-manager as shipped, kruise-manager
 * with a raised client rate limit, and the agent as its image runs it, each on a fresh cluster
 * (run.ts), for a number of rounds; each creates an InPlaceIfPossible set (one pod per node, to
 * all ready), then updates its image in place (to all updated and ready) and counts the pods
 * recreated. Prints medians and ratios and writes the results file after every run. Numbers
 * only, no timed assertions.
 *
 *   npm run bench:daemonset                                   # 3 rounds, 100 nodes: results/daemonset.json
 *   npm run bench:daemonset -- --nodes=5 --rounds=1           # smoke: results/daemonset-smoke.json
 *
 * Options: --nodes=<n> (100), --rounds=<n> (3), --subjects=kruise,kruise-qps1000,flotilla,
 * --out=<file>, --keep-env; kruise-manager is the one `build-tools.sh kruise` builds (and caches)
 * at the pinned version, or --kruise-manager=<binary> --kruise-src=<source tree> (KRUISE_MANAGER,
 * KRUISE_SRC).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, runSideBySide } from '../kruise/side-by-side.js';
import { runOnce } from './run.js';
import { daemonSetMedians, daemonSetRatios } from './summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const args = benchArgs(process.argv);
const nodes = args.positiveInt('nodes', 100);

await runSideBySide({
  name: 'daemonset',
  root,
  args,
  defaultOut: path.join(here, '..', 'results', nodes >= 100 ? 'daemonset.json' : 'daemonset-smoke.json'),
  settings: { nodes },
  run: (setup) => runOnce({ ...setup, nodes }),
  summarize: (runs) => {
    const medians = daemonSetMedians(runs);
    return { medians, ratios: daemonSetRatios(medians) };
  },
});
