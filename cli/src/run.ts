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
import type { HubTls } from './tls-fetch.js';

export const DEFAULT_HUB_URL = 'http://127.0.0.1:8080';

export interface CliEnv {
  /** FLOTILLA_HUB_URL */
  hubUrl: string | undefined;
  /** FLOTILLA_TOKEN */
  token: string | undefined;
  /** FLOTILLA_CA_FILE */
  caFile?: string | undefined;
}

/** What the entry point gives: the environment it read, fetch, and the process's side (time optional). */
export interface CliDeps extends Omit<CliIo, 'now' | 'sleep'>, Partial<Pick<CliIo, 'now' | 'sleep'>> {
  env: CliEnv;
  fetch: Fetch;
  /** The fetch for a CA file or --insecure (the entry point's); without it `fetch` serves both. */
  tlsFetch?: (tls: HubTls) => Fetch;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function checkHubUrl(raw: string, insecure: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new CliError('CLI_ERR_USAGE', `--hub-url "${raw}" is not a URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError('CLI_ERR_USAGE', `--hub-url must be http:// or https:// (got ${url.protocol})`);
  }
  // The token would cross the network in clear text.
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname) && !insecure) {
    throw new CliError('CLI_ERR_USAGE', `--hub-url must be https:// for ${url.hostname} (or give --insecure)`);
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

/** The hub's CA (--ca-file, else FLOTILLA_CA_FILE) and --insecure. */
async function hubTls(opts: OptionValues, deps: CliDeps): Promise<HubTls> {
  const insecure = opts['insecure'] === true;
  const file = str(opts, 'ca-file') ?? (deps.env.caFile?.trim() || undefined);
  if (file === undefined) return { caPem: undefined, insecure };
  let caPem: string;
  try {
    caPem = await deps.readFile(file);
  } catch (cause) {
    throw new CliError('CLI_ERR_FILE', `cannot read --ca-file ${file}: ${(cause as Error).message}`, { cause });
  }
  if (!caPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new CliError('CLI_ERR_CONFIG', `--ca-file ${file} holds no PEM certificate`);
  }
  return { caPem, insecure };
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
  const tls = await hubTls(options, deps);
  const baseUrl = checkHubUrl(str(options, 'hub-url') ?? deps.env.hubUrl ?? DEFAULT_HUB_URL, tls.insecure);
  const custom = tls.caPem !== undefined || tls.insecure;
  const fetch = custom && deps.tlsFetch ? deps.tlsFetch(tls) : deps.fetch;
  const client = createHubClient({ baseUrl, token: await tokenFrom(options, deps), fetch });
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
