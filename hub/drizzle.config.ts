import { defineConfig } from 'drizzle-kit';

// Generation only (`npx drizzle-kit generate` in hub/); the hub applies migrations itself at start.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema',
  out: '../migrations',
  strict: true,
  verbose: true,
});
