// Fuzz runs (issue 20): property-based fuzzing of the REST API, the NATS receivers and the
// merge-patch / override path with fast-check, a fixed seed per run. Prints progress and a
// summary, writes test/bench/fuzz/results/<target>.json, exits 1 when any property broke.
// Run (the machine is shared: one target at a time, at nice 10):
//   nice -n 10 npm run bench:fuzz -- --target=rest|nats|nats-live|merge-patch [--runs=100000] [--seed=1]
// README.md beside this file describes the method, what it does not measure, and the results.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Findings } from './lib/findings.js';
import { runSync, type RunOptions } from './lib/run.js';
import { checkMergePatch, mergePatchInput } from './merge-patch.js';
import { checkNats, natsInput } from './nats.js';
import { runNatsLive } from './nats-live.js';
import { startRestFuzz } from './rest/target.js';

const TARGETS = ['rest', 'nats', 'nats-live', 'merge-patch'] as const;
type Target = (typeof TARGETS)[number];

/** Kinds of finding that mean something crashed or stopped answering. */
const CRASH_KINDS = ['throws', 'crash', 'hub-down', 'no-answer', 'runner', 'harness'];

function flag(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length) ?? fallback;
}

function positiveInteger(name: string, fallback: number): number {
  const v = Number(flag(name, String(fallback)));
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

async function run(target: Target, opts: RunOptions): Promise<Findings> {
  switch (target) {
    case 'merge-patch':
      return runSync({ arbitrary: mergePatchInput, check: checkMergePatch }, opts);
    case 'nats':
      return runSync({ arbitrary: natsInput, check: checkNats }, opts);
    case 'nats-live':
      return runNatsLive(opts);
    case 'rest': {
      const rest = await startRestFuzz();
      try {
        console.log(`${rest.routes.length} routes from the hub's OpenAPI document and its hidden routes`);
        return await rest.run(opts);
      } finally {
        await rest.stop();
      }
    }
  }
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const target = flag('target', '') as Target;
if (!TARGETS.includes(target)) {
  console.error(`--target must be one of ${TARGETS.join(', ')}`);
  process.exit(2);
}
const runs = positiveInteger('runs', target === 'nats-live' ? 5000 : 100_000);
const seed = positiveInteger('seed', 20261127);
const started = performance.now();
console.log(`fuzz ${target}: ${runs} inputs, seed ${seed}`);
const findings = await run(target, {
  runs,
  seed,
  every: Math.max(1000, Math.floor(runs / 20)),
  progress: (done, f) =>
    console.log(`  ${done} inputs, ${Math.round((performance.now() - started) / 1000)} s, ${f.list().length} findings`),
});
const seconds = (performance.now() - started) / 1000;
const list = findings.list();
const crashes = list.filter((f) => CRASH_KINDS.includes(f.kind)).reduce((n, f) => n + f.count, 0);
const result = {
  target,
  date: new Date().toISOString(),
  commit: gitCommit(),
  seed,
  inputs: findings.inputs,
  seconds: Math.round(seconds),
  inputsPerSecond: Math.round(findings.inputs / seconds),
  crashes,
  fiveHundreds: findings.total('5xx'),
  otherViolations: list
    .filter((f) => !CRASH_KINDS.includes(f.kind) && f.kind !== '5xx')
    .reduce((n, f) => n + f.count, 0),
  findings: list,
  counters: findings.countersObject(),
  machine: { cpus: os.cpus().length, load1: Math.round(os.loadavg()[0]! * 10) / 10, node: process.version },
};
const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, `${target}.json`), `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `${target}: ${result.inputs} inputs in ${result.seconds} s (${result.inputsPerSecond}/s): ` +
    `${crashes} crashes, ${result.fiveHundreds} 5xx, ${result.otherViolations} other violations`,
);
for (const f of list) console.log(`  ${f.count} × ${f.kind} ${f.where}: ${f.detail.split('\n')[0]!.slice(0, 160)}`);
process.exit(list.length === 0 ? 0 : 1);
