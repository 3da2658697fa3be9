/**
 * Entry of the admission thread (started by thread/host.ts): serves admissions on the worker's
 * parent port with a logger of its own (same level and redaction as the agent's root logger).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createRootLogger, type LogLevel } from '../../logger.js';
import type { ThreadInit } from './protocol.js';
import { serveAdmissions } from './serve.js';

if (!parentPort) throw new Error('the admission thread must run in a worker thread');
const init = workerData as ThreadInit;
serveAdmissions(parentPort, init, createRootLogger(init.logLevel as LogLevel).child({ component: 'webhook-thread' }));
