// @ts-check
/* eslint-disable @typescript-eslint/explicit-module-boundary-types -- browser JS: the JSDoc types every export and tsc checks it (@ts-check) */
/**
 * An incremental parser of server-sent events (the text/event-stream format of the WHATWG HTML
 * standard), for the dashboard, which reads the stream through fetch because EventSource cannot
 * send the bearer token. Pure: text in, events out.
 */

/**
 * @typedef {object} SseEvent
 * @property {string} id     the last `id:` seen (carried over between events, as the standard says)
 * @property {string} event  the `event:` field, `message` when absent
 * @property {string} data   the `data:` lines joined with newlines
 */

/**
 * Returns a function that takes the next chunk of the stream's text and returns the events it
 * completed; a partial line or event waits for the next chunk.
 * @returns {(chunk: string) => SseEvent[]}
 */
export function createSseParser() {
  let buffer = '';
  /** The event being read: its fields so far, and the `id:` carried over from earlier ones. */
  const pending = { id: '', event: '', /** @type {string[]} */ data: [] };
  return (chunk) => {
    buffer += chunk;
    /** @type {SseEvent[]} */
    const out = [];
    for (;;) {
      const nl = buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more text.
      if (buffer[nl] === '\r' && nl === buffer.length - 1) break;
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
      const done = readLine(pending, line);
      if (done) out.push(done);
    }
    return out;
  };
}

/**
 * Applies one line to the event being read. A blank line completes it: returns the event when
 * it has data (and starts the next one), else undefined.
 * @param {{ id: string, event: string, data: string[] }} pending
 * @param {string} line
 * @returns {SseEvent | undefined}
 */
function readLine(pending, line) {
  if (line === '') {
    const done =
      pending.data.length > 0
        ? { id: pending.id, event: pending.event || 'message', data: pending.data.join('\n') }
        : undefined;
    pending.data = [];
    pending.event = '';
    return done;
  }
  if (line.startsWith(':')) return undefined;
  const colon = line.indexOf(':');
  const field = colon < 0 ? line : line.slice(0, colon);
  let value = colon < 0 ? '' : line.slice(colon + 1);
  if (value.startsWith(' ')) value = value.slice(1);
  if (field === 'data') pending.data.push(value);
  else if (field === 'event') pending.event = value;
  else if (field === 'id' && !value.includes('\0')) pending.id = value;
  return undefined;
}
