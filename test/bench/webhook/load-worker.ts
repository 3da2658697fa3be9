// The load thread: the open loop and its HTTP/2 connection, on an event loop that does nothing
// else. On the bench's main thread the loop shared its event loop with the trace receiver, whose
// decoding of a batch of spans held sends back: creates left up to 35 ms late and several together,
// a burst the apiserver then queued (loadGeneratorLateness).
import { parentPort, workerData } from 'node:worker_threads';
import { http2Creator, openLoop } from './load.js';
import type { FromLoadThread, LoadThreadInit, ToLoadThread } from './load-protocol.js';
import { openLoopStreams } from './pods.js';

const port = parentPort!;
const post = (m: FromLoadThread): void => port.postMessage(m);
const { target } = workerData as LoadThreadInit;

try {
  const client = await http2Creator(target);
  port.on('message', (m: ToLoadThread) => {
    if (m.type === 'close') {
      client.close();
      post({ type: 'closed' });
      return;
    }
    openLoop(client.create, m.namespace, m.seconds, openLoopStreams(m.streams)).then(
      (results) => post({ type: 'done', id: m.id, results, connections: client.connections() }),
      (err: unknown) => post({ type: 'failed', id: m.id, message: err instanceof Error ? err.message : String(err) }),
    );
  });
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
