/**
 * The limits of pulling one tag, as kruise-daemon applies them (imagepuller_worker.go): a
 * timeout per attempt (default 10 min), backoffLimit retries after the first attempt (default 3),
 * an optional deadline from the tag's activeDeadlineSeconds counted from when pulling started,
 * and an exponential backoff between attempts, 1 s doubling up to 30 s.
 */
import type { ImageTagSpec } from '@flotilla/api';
import { backoffDelay } from '../runtime/backoff.js';

export const DEFAULT_TIMEOUT_SECONDS = 600;
export const DEFAULT_BACKOFF_LIMIT = 3;
const BACKOFF = { initialMs: 1000, maxMs: 30_000, factor: 2, jitter: 0 };

export interface PullLimits {
  timeoutMs: number;
  /** Attempts in total: backoffLimit + 1. */
  attempts: number;
  /** Epoch ms after which no attempt starts and a running one is cut short; none without a deadline. */
  deadlineMs: number | undefined;
}

/** Limits for a tag whose pulling started at `startedMs`; nonsense values fall back to defaults. */
export function pullLimits(tag: ImageTagSpec, startedMs: number): PullLimits {
  const p = tag.pullPolicy ?? {};
  const timeout = p.timeoutSeconds !== undefined && p.timeoutSeconds > 0 ? p.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS;
  const retries = p.backoffLimit !== undefined && p.backoffLimit >= 0 ? p.backoffLimit : DEFAULT_BACKOFF_LIMIT;
  const deadline = p.activeDeadlineSeconds;
  return {
    timeoutMs: timeout * 1000,
    attempts: retries + 1,
    deadlineMs: deadline !== undefined && deadline > 0 ? startedMs + deadline * 1000 : undefined,
  };
}

/** How long the next attempt may take at `nowMs`; undefined once the deadline has passed. */
export function attemptTimeoutMs(limits: PullLimits, nowMs: number): number | undefined {
  if (limits.deadlineMs === undefined) return limits.timeoutMs;
  const left = limits.deadlineMs - nowMs;
  return left > 0 ? Math.min(limits.timeoutMs, left) : undefined;
}

/** The pause after failed attempt number `failures` (1-based): 1 s, 2 s, 4 s, … capped at 30 s. */
export function retryDelayMs(failures: number): number {
  return backoffDelay(failures, BACKOFF);
}
