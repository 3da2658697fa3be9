export { parseCron, cronMatchesDay, type Cron, type CronParse } from './cron.js';
export * from './window.js';
