#!/usr/bin/env node
/* global process, console, URL */
// The `flotilla-hub` command (this package's bin): runs the built local hub. The bin is this small
// source file, not dist/, so npm links it at install time, before anything is built.
import { existsSync } from 'node:fs';

const main = new URL('../dist/local/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('flotilla-hub: hub/dist/local/main.js is missing; run `npm run build` first');
  process.exit(1);
}
await import(main.href);
