// Starts the admission thread from the TypeScript sources (the agent under tsx, tests under
// vitest): registers tsx's loader in this thread, then loads worker.ts. Compiled agents start
// worker.js directly and never load this file.
import { register } from 'tsx/esm/api';
import { URL } from 'node:url';

register();
await import(new URL('./worker.ts', import.meta.url).href);
