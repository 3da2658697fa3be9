import { execFile } from 'node:child_process';
import { HarnessError } from './errors.js';

/** Runs a short command to completion; a non-zero exit fails with its stderr. */
export async function run(
  component: string,
  command: string,
  args: string[],
  opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new HarnessError(
              'COMMAND_FAILED',
              component,
              `${command} ${args.join(' ')} failed: ${err.message}`,
              stderr,
              {
                cause: err,
              },
            ),
          );
        } else resolve(stdout);
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}
