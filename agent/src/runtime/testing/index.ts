/** In-memory fakes of the runtime's side effects, for unit tests of controllers built on it. */
export { FakeClock, flush } from './fake-clock.js';
export { FakeLeaseClient } from './fake-lease-client.js';
export { FakeListWatcher } from './fake-list-watch.js';
