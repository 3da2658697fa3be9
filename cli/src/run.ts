/**
 * The CLI without its process: parse argv, build the client from flags and the environment the
 * entry point read, run the command, and turn every failure into a message and an exit code.
 */
import { sleep } from '@flotilla/api/time';
import { parseCommandLine, str, type OptionValues } from './args.js';
import { createHubClient, type Fetch } from './client.js';
import { COMMANDS } from './commands/index.js';
import type { CliContext, CliIo } from './context.js';
import { CliError, EXIT_ERROR, EXIT_OK } from './errors.js';
import { parseOutputFormat } from './output.js';

export const DEFAULT_HUB_URL = 'http://127.0.0.1:8080';

export interface CliEnv {
  /** FLOTILLA_HUB_URL */
  hubUrl: string | undefined;
  /** FLOTILLA_TOKEN */
  token: string | undefined;
}

/** What the entry point gives: the environment it read, fetch, and the process's side (time optional). */
export interface CliDeps extends Omit<CliIo, 'now' | 'sleep'>, Partial<Pick<CliIo, 'now' | 'sleep'>> {
  env: CliEnv;
  fetch: Fetch;
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

async function readTokenFile(file: string, readFile: CliDeps['readFile']): Promise<string> {
  let text: string;
  try {
    text = await readFile(file);
  } catch (cause) {
    throw new CliError('CLI_ERR_FILE', `cannot read --token-file ${file}: ${(cause as Error).message}`, { cause });
  }
  const token = text.trim();
  if (token === '') throw new CliError('CLI_ERR_CONFIG', `--token-file ${file} is empty`);
  return token;
}

/** --token, else --token-file, else FLOTILLA_TOKEN; giving both flags is a usage error. */
async function tokenFrom(opts: OptionValues, deps: CliDeps): Promise<string | undefined> {
  const flag = str(opts, 'token');
  const file = str(opts, 'token-file');
  if (flag !== undefined && file !== undefined)
    throw new CliError('CLI_ERR_USAGE', 'give --token or --token-file, not both');
  if (flag !== undefined) return flag;
  if (file !== undefined) return readTokenFile(file, deps.readFile);
  return deps.env.token?.trim() || undefined;
}

/** A file a command reads; failing to read it is an error naming the file. */
function fileReader(readFile: CliDeps['readFile']): CliIo['readFile'] {
  return async (path) => {
    try {
      return await readFile(path);
    } catch (cause) {
      throw new CliError('CLI_ERR_FILE', `cannot read ${path}: ${(cause as Error).message}`, { cause });
    }
  };
}

/** The command's context, from the global flags (checked in order: hub, token, output) and the deps. */
async function contextFor(options: OptionValues, deps: CliDeps): Promise<CliContext> {
  const baseUrl = checkHubUrl(str(options, 'hub-url') ?? deps.env.hubUrl ?? DEFAULT_HUB_URL);
  const client = createHubClient({ baseUrl, token: await tokenFrom(options, deps), fetch: deps.fetch });
  return {
    client,
    format: parseOutputFormat(str(options, 'output')),
    stdout: deps.stdout,
    stderr: deps.stderr,
    readFile: fileReader(deps.readFile),
    now: deps.now ?? ((): Date => new Date()),
    sleep: deps.sleep ?? ((ms): Promise<void> => sleep(ms)),
  };
}

/** Runs one command line; resolves to the process exit code. Never throws. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, COMMANDS);
    if (parsed.kind === 'help') {
      deps.stdout(parsed.text);
      return EXIT_OK;
    }
    return await parsed.command.run(await contextFor(parsed.input.options, deps), parsed.input);
  } catch (err) {
    deps.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof CliError ? err.exitCode : EXIT_ERROR;
  }
}
