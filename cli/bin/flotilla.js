#!/usr/bin/env node
/* global process, console, URL */
// The `flotilla` command (this package's bin): runs the built CLI. The bin is this small source
// file, not dist/, so npm links it at install time, before anything is built.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('flotilla: cli/dist/main.js is missing; run `npm run build` first');
  process.exit(1);
}
await import(main.href);
