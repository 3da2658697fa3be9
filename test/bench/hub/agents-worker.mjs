// Worker entry: registers tsx in this thread (loaders are per thread), then loads the agents.
import { register } from 'tsx/esm/api';

register();
await import('./agents.ts');
