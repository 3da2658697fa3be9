/**
 * The CLI without its process: parse argv, build the client from flags and the environment the
 * entry point read, run the command, and turn every failure into a message and an exit code.
 */
import { parseCommandLine, str, type OptionValues } from './args.js';
import { createHubClient, type Fetch } from './client.js';
import { clusterCommands } from './commands/clusters.js';
import { rolloutCommands } from './commands/rollouts.js';
import { tokenCommands } from './commands/tokens.js';
import { workloadCommands } from './commands/workloads.js';
import type { CliContext, Command } from './context.js';
import { CliError, EXIT_ERROR, EXIT_OK } from './errors.js';
import { parseOutputFormat } from './output.js';

export const DEFAULT_HUB_URL = 'http://127.0.0.1:8080';

export interface CliEnv {
  /** FLOTILLA_HUB_URL */
  hubUrl: string | undefined;
  /** FLOTILLA_TOKEN */
  token: string | undefined;
}

export interface CliDeps {
  env: CliEnv;
  fetch: Fetch;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readFile: (path: string) => Promise<string>;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

export function allCommands(sleep: (ms: number) => Promise<void>): Command[] {
  return [...clusterCommands(), ...workloadCommands(), ...rolloutCommands(sleep), ...tokenCommands()];
}

function checkHubUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new CliError('CLI_ERR_USAGE', `--hub-url "${raw}" is not a URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError('CLI_ERR_USAGE', `--hub-url must be http:// or https:// (got ${url.protocol})`);
  }
  return raw;
}

async function tokenFrom(opts: OptionValues, deps: CliDeps): Promise<string | undefined> {
  const flag = str(opts, 'token');
  const file = str(opts, 'token-file');
  if (flag !== undefined && file !== undefined)
    throw new CliError('CLI_ERR_USAGE', 'give --token or --token-file, not both');
  if (flag !== undefined) return flag;
  if (file !== undefined) {
    let text: string;
    try {
      text = await deps.readFile(file);
    } catch (cause) {
      throw new CliError('CLI_ERR_FILE', `cannot read --token-file ${file}: ${(cause as Error).message}`, { cause });
    }
    const token = text.trim();
    if (token === '') throw new CliError('CLI_ERR_CONFIG', `--token-file ${file} is empty`);
    return token;
  }
  return deps.env.token?.trim() || undefined;
}

/** Runs one command line; resolves to the process exit code. Never throws. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  const sleep = deps.sleep ?? ((ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms)));
  try {
    const parsed = parseCommandLine(argv, allCommands(sleep));
    if (parsed.kind === 'help') {
      deps.stdout(parsed.text);
      return EXIT_OK;
    }
    const { options } = parsed.input;
    const ctx: CliContext = {
      client: createHubClient({
        baseUrl: checkHubUrl(str(options, 'hub-url') ?? deps.env.hubUrl ?? DEFAULT_HUB_URL),
        token: await tokenFrom(options, deps),
        fetch: deps.fetch,
      }),
      format: parseOutputFormat(str(options, 'output')),
      stdout: deps.stdout,
      stderr: deps.stderr,
      readFile: async (path) => {
        try {
          return await deps.readFile(path);
        } catch (cause) {
          throw new CliError('CLI_ERR_FILE', `cannot read ${path}: ${(cause as Error).message}`, { cause });
        }
      },
      now: deps.now ?? ((): Date => new Date()),
    };
    return await parsed.command.run(ctx, parsed.input);
  } catch (err) {
    if (err instanceof CliError) {
      deps.stderr(`error: ${err.message}\n`);
      return err.exitCode;
    }
    deps.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_ERROR;
  }
}
