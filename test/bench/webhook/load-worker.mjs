// Starts the load thread from the TypeScript sources (the bench runs under tsx): registers tsx's
// loader in the thread, then loads load-worker.ts.
import { register } from 'tsx/esm/api';
import { URL } from 'node:url';

register();
await import(new URL('./load-worker.ts', import.meta.url).href);
