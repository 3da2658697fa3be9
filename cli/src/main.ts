#!/usr/bin/env node
/**
 * `flotilla`: the hub's command-line client. The only place the CLI reads the environment
 * (FLOTILLA_HUB_URL, FLOTILLA_TOKEN, FLOTILLA_CA_FILE); everything else is injected into runCli.
 */
import { readFile } from 'node:fs/promises';
import { runCli } from './run.js';
import { tlsFetch } from './tls-fetch.js';

async function readInput(path: string): Promise<string> {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const code = await runCli(process.argv.slice(2), {
  env: {
    hubUrl: process.env.FLOTILLA_HUB_URL,
    token: process.env.FLOTILLA_TOKEN,
    caFile: process.env.FLOTILLA_CA_FILE,
  },
  fetch: (input, init) => fetch(input, init),
  tlsFetch,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readFile: readInput,
});
process.exitCode = code;
