/**
 * Runs `agent manager` as its own process, as a user (or the Helm chart) does, for the suites that
 * need real agents against a hub. The hub link alone, without a webhook and controllers: both act
 * cluster-wide and would touch the objects of every other suite on the shared clusters.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface AgentProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** The JSON log lines' messages so far. */
  messages(): string[];
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

export function startAgentProcess(args: string[], env: Record<string, string> = {}): AgentProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', 'agent/src/main.ts', 'manager', ...args],
    {
      cwd: root,
      env: {
        ...process.env,
        KUBECONFIG: '',
        FLOTILLA_CLUSTER_NAME: '',
        FLOTILLA_HUB_URL: '',
        FLOTILLA_BOOTSTRAP_TOKEN: '',
        FLOTILLA_COMPONENTS: 'hublink',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const messages = (): string[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return String((JSON.parse(l) as { msg?: unknown }).msg);
        } catch {
          return '';
        }
      });
  return {
    child,
    output: () => out,
    messages,
    exit,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exit;
    },
  };
}
