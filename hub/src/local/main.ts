/**
 * Entry point of `flotilla-hub` (hub/bin/flotilla-hub.js): parse the command line, start the
 * local hub, print where it is, and on SIGINT/SIGTERM stop everything it started. A start that
 * fails prints one line naming what is wrong and exits 1. `flotilla-hub nats-setup` writes an
 * operator-mode setup for a cluster install instead (nats-setup.ts) and exits.
 */
import { readFileSync } from 'node:fs';
import { HubError } from '../errors.js';
import { createLogger } from '../logger.js';
import { parseCommand } from './args.js';
import { startLocalHub } from './command.js';
import { runNatsSetup } from './nats-setup.js';

/** Stopping waits for the hub to drain, then for nats-server and PostgreSQL to flush. */
const STOP_GRACE_MS = 90_000;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function fail(err: unknown): never {
  const message =
    err instanceof HubError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`flotilla-hub: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const parsed = parseCommand(process.argv.slice(2), process.env);
  if (parsed.kind === 'help') return void process.stdout.write(parsed.usage);
  if (parsed.kind === 'version') return void process.stdout.write(`flotilla-hub ${version()}\n`);
  if (parsed.kind === 'nats-setup') return void process.stdout.write(await runNatsSetup(parsed.options));
  const logger = createLogger(process.env['LOG_LEVEL'] ?? 'warn');
  let stopping = false;
  let stopRequested: NodeJS.Signals | undefined;
  // A signal during the start is kept and acted on once the start has settled.
  const early = (signal: NodeJS.Signals): void => void (stopRequested = signal);
  process.on('SIGINT', early);
  process.on('SIGTERM', early);
  const local = await startLocalHub(parsed.options, process.env, logger);
  process.stdout.write(local.banner);
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`flotilla-hub: ${signal}: stopping the hub, nats-server and PostgreSQL\n`);
    setTimeout(() => fail(new Error('stopping took too long; exiting')), STOP_GRACE_MS).unref();
    local.close().then(
      () => {
        process.stderr.write('flotilla-hub: stopped\n');
        process.exit(0);
      },
      (err: unknown) => fail(err),
    );
  };
  process.off('SIGINT', early);
  process.off('SIGTERM', early);
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  if (stopRequested) shutdown(stopRequested);
}

main().catch(fail);
