import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How the agent image starts Node: the flags of its ENTRYPOINT before the script and the
 * variables its ENV lines set. Benchmarks start the agent with these, so memory and CPU are
 * measured with the settings the agent ships with, read from the one place that sets them.
 */
export interface AgentImageRuntime {
  nodeFlags: string[];
  env: Record<string, string>;
  /** The script the image runs, relative to the repository root (agent/dist/bundle/main.js). */
  script: string;
}

export function agentImageRuntime(root: string): AgentImageRuntime {
  const text = readFileSync(path.join(root, 'deploy/docker/agent.Dockerfile'), 'utf8');
  // Only the last stage is the image.
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(runtime);
  if (!entry) throw new Error('agent.Dockerfile: no ENTRYPOINT in exec form in the runtime stage');
  const argv = JSON.parse(entry[1]!) as string[];
  const script = argv.findIndex((a) => a.endsWith('.js'));
  const nodeFlags = argv.slice(1, script);
  const env: Record<string, string> = {};
  for (const m of runtime.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const pair of m[1]!.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[pair[1]!] = pair[2]!.replace(/^"|"$/g, '');
  }
  return { nodeFlags, env, script: argv[script]! };
}
