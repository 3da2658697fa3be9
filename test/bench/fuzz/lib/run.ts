/**
 * Runs a fuzz target through fast-check with a fixed seed. The property itself never fails:
 * every input is checked, what it broke is recorded in Findings, and the run goes on, so one
 * run counts every distinct problem instead of stopping (and shrinking) at the first. The seeded
 * CI subsets use the same check with `fc.assert`, which does stop and shrink.
 */
import fc from 'fast-check';
import { Findings, type Violation } from './findings.js';

export interface RunOptions {
  runs: number;
  seed: number;
  /** Called every `every` inputs (progress lines). */
  progress?: (done: number, findings: Findings) => void;
  every?: number;
}

export interface SyncTarget<I> {
  arbitrary: fc.Arbitrary<I>;
  check(input: I, findings: Findings): Violation[];
}

export interface AsyncTarget<I> {
  arbitrary: fc.Arbitrary<I>;
  check(input: I, findings: Findings): Promise<Violation[]>;
}

function tick(findings: Findings, opts: RunOptions): void {
  if (opts.progress && findings.inputs % (opts.every ?? 10_000) === 0) opts.progress(findings.inputs, findings);
}

export function runSync<I>(target: SyncTarget<I>, opts: RunOptions, findings = new Findings()): Findings {
  const result = fc.check(
    fc.property(target.arbitrary, (input) => {
      findings.record(input, target.check(input, findings));
      tick(findings, opts);
    }),
    { numRuns: opts.runs, seed: opts.seed, endOnFailure: true },
  );
  if (result.failed)
    findings.record(undefined, [{ kind: 'runner', where: 'fast-check', detail: String(result.errorInstance) }]);
  return findings;
}

export async function runAsync<I>(
  target: AsyncTarget<I>,
  opts: RunOptions,
  findings = new Findings(),
): Promise<Findings> {
  const result = await fc.check(
    fc.asyncProperty(target.arbitrary, async (input) => {
      findings.record(input, await target.check(input, findings));
      tick(findings, opts);
    }),
    { numRuns: opts.runs, seed: opts.seed, endOnFailure: true },
  );
  if (result.failed)
    findings.record(undefined, [{ kind: 'runner', where: 'fast-check', detail: String(result.errorInstance) }]);
  return findings;
}
