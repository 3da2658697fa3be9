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
  let lastId = '';
  /** @type {string[]} */
  let data = [];
  let event = '';
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
      if (line === '') {
        if (data.length > 0) out.push({ id: lastId, event: event || 'message', data: data.join('\n') });
        data = [];
        event = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id' && !value.includes('\0')) lastId = value;
    }
    return out;
  };
}
