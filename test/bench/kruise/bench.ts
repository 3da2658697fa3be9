// The Flotilla agent beside kruise-manager, on the same harness cluster set-up with the same
// instrument: runs alternate kruise-manager as shipped, kruise-manager with a raised client rate
// limit, and the agent, each on a fresh cluster (run.ts), for a number of rounds. Prints medians
// and ratios, and writes test/bench/results/kruise.json with every run.
// Run: npm run bench:kruise -- [--rounds=3] [--pods=400] [--idle-seconds=30]
//      [--subjects=kruise,kruise-qps1000,flotilla] [--out=<file>] [--keep-env]
// kruise-manager is the one `build-tools.sh kruise` builds (and caches) at the pinned version;
// --kruise-manager=<binary> --kruise-src=<source tree> (or KRUISE_MANAGER and KRUISE_SRC) override it.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentImageRuntime } from '../agent-image.js';
import { agentCommand } from '../cloneset/measure.js';
import { ensureKruise, readVersions } from '../../env/src/index.js';
import { checkKruiseDist, givenKruiseDist, kruiseStep, type KruiseDist } from './kruise-manager.js';
import { RAISED_QPS, runOnce, type RunRecord } from './run.js';
import { medians, ratios, schedule, SUBJECTS, type Subject } from './summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

const option = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

function positiveInt(name: string, fallback: number): number {
  const raw = option(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a positive integer, got "${raw}"`);
  return n;
}

function subjects(): Subject[] {
  const raw = option('subjects');
  if (raw === undefined) return [...SUBJECTS];
  const list = raw.split(',');
  for (const s of list) {
    if (!(SUBJECTS as readonly string[]).includes(s))
      throw new Error(`--subjects: "${s}" is not one of ${SUBJECTS.join(', ')}`);
  }
  return list as Subject[];
}

const rounds = positiveInt('rounds', 3);
const pods = positiveInt('pods', 400);
const idleSeconds = positiveInt('idle-seconds', 30);
const chosen = subjects();
const out = path.resolve(option('out') ?? path.join(root, 'test/bench/results/kruise.json'));
const keepEnv = process.argv.includes('--keep-env');
const log = (msg: string): void => void process.stderr.write(`[bench:kruise] ${msg}\n`);

const KRUISE_VERSION = readVersions().KRUISE_VERSION;
let kruise: (KruiseDist & { sha256: string; from: string }) | undefined;
if (chosen.some((s) => s !== 'flotilla')) {
  const given = givenKruiseDist(
    option('kruise-manager') ?? process.env.KRUISE_MANAGER,
    option('kruise-src') ?? process.env.KRUISE_SRC,
  );
  const dist =
    given ??
    (await kruiseStep(`building ${KRUISE_VERSION} (bash test/env/build-tools.sh kruise)`, () => {
      const tool = ensureKruise();
      return { binary: tool.binary, source: tool.manifests };
    }));
  const from = given ? '--kruise-manager / --kruise-src' : 'build-tools.sh kruise (module proxy, pinned h1 hashes)';
  kruise = { ...dist, from, ...checkKruiseDist(dist) };
}

const agent = agentCommand(root);
const image = agentImageRuntime(root);
const runs: RunRecord[] = [];

function result(): unknown {
  const m = medians(runs);
  return {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 1024 ** 3) },
    pods,
    rounds,
    idleSeconds,
    subjects: {
      kruise: `kruise-manager ${KRUISE_VERSION}, as its chart starts it (client rate limit 30 qps / burst 50, log level 4), webhook in URL mode`,
      'kruise-qps1000': `the same with --rest-config-qps=${RAISED_QPS.qps} --rest-config-burst=${RAISED_QPS.burst}`,
      flotilla: `agent manager, every component (webhook in URL mode); ${agent.runtime}; ${[...image.nodeFlags, ...Object.entries(image.env).map(([k, v]) => `${k}=${v}`)].join(' ')}`,
    },
    kruiseManager: kruise && { version: KRUISE_VERSION, from: kruise.from, binarySha256: kruise.sha256 },
    medians: m,
    /** Against kruise with the raised rate limit. Speed: its time ÷ ours; memory and CPU: ours ÷ its. */
    ratios: ratios(m),
    runs,
  };
}

for (const { subject, round } of schedule(rounds, chosen)) {
  log(`run ${runs.length + 1}: ${subject}, round ${round}`);
  runs.push(
    await runOnce({
      subject,
      round,
      pods,
      idleSeconds,
      root,
      ...(kruise ? { kruise } : {}),
      agent: { nodeArgs: [...image.nodeFlags, ...agent.args], env: image.env },
      keepEnv,
    }),
  );
  // Written after every run, so a failure later keeps what was measured.
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result(), null, 2) + '\n');
}

const final = result() as { medians: ReturnType<typeof medians>; ratios: ReturnType<typeof ratios> };
console.table(final.medians);
console.log('ratios against kruise with the raised rate limit:', JSON.stringify(final.ratios));
log(`results in ${out}`);
