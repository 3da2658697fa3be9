/** Waiting: the abortable sleep and the timers it runs on. */
export { sleep, systemTimers, untilAborted, type SleepOptions, type Timer, type Timers } from './sleep.js';
