// The Flotilla agent beside kruise-manager, on the same harness cluster set-up with the same
// instrument: runs alternate kruise-manager as shipped, kruise-manager with a raised client rate
// limit, the agent, and the ceiling (no controller: the bench makes the controller's writes
// itself, every pod at once; ceiling.ts), each on a fresh cluster (run.ts), for a number of
// rounds. Prints medians, ratios and each subject's times over the ceiling's, and writes
// test/bench/results/kruise.json with every run.
// Run: npm run bench:kruise -- [--rounds=3] [--pods=400] [--idle-seconds=30]
//      [--subjects=kruise,kruise-qps1000,flotilla,ceiling] [--out=<file>] [--keep-env]
// kruise-manager is the one `build-tools.sh kruise` builds (and caches) at the pinned version;
// --kruise-manager=<binary> --kruise-src=<source tree> (or KRUISE_MANAGER and KRUISE_SRC) override it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOnce } from './run.js';
import { benchArgs, runSideBySide } from './side-by-side.js';
import { ceilingRatios, medians, ratios, SUBJECTS } from './summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const args = benchArgs(process.argv);
const pods = args.positiveInt('pods', 400);
const idleSeconds = args.positiveInt('idle-seconds', 30);

await runSideBySide({
  name: 'kruise',
  root,
  args,
  defaultOut: path.join(root, 'test/bench/results/kruise.json'),
  settings: { pods, idleSeconds },
  subjects: SUBJECTS,
  run: (setup) => runOnce({ ...setup, pods, idleSeconds }),
  summarize: (runs) => {
    const m = medians(runs);
    /** Against kruise with the raised rate limit. Speed: its time ÷ ours; memory and CPU: ours ÷ its. */
    return { medians: m, ratios: ratios(m), ceilingRatios: ceilingRatios(m) };
  },
});
