/**
 * Sampling interval (ms) of the event-loop delay monitors: the main thread's (prom-client's
 * nodejs_eventloop_lag_*) and the admission thread's. Each sample wakes its thread; at
 * prom-client's default of 10 ms the two monitors alone kept an idle agent at about 0.01 cores,
 * twice kruise-manager's whole idle CPU (test/bench/kruise/README.md). A stall longer than this
 * is still seen by every sample it delays.
 */
export const EVENT_LOOP_MONITOR_MS = 100;
