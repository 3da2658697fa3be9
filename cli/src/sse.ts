/**
 * Reading server-sent events (the text/event-stream format of the WHATWG HTML standard) from a
 * response body, for `rollouts watch`. `sseEvents` is the parser, pure over text chunks; `readSse`
 * feeds it a fetch body. A dropped connection just ends the events: the caller decides whether to
 * reconnect (with the last `id` as Last-Event-ID).
 */

export interface SseEvent {
  /** The last `id:` field seen; it carries over to later events, as the standard says. */
  id: string;
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

/** `field: value` → [field, value] (one space after the colon dropped); a line without a colon is a field with no value. */
function splitField(line: string): [string, string] {
  const colon = line.indexOf(':');
  if (colon < 0) return [line, ''];
  const value = line.slice(colon + 1);
  return [line.slice(0, colon), value.startsWith(' ') ? value.slice(1) : value];
}

/**
 * The events in a stream of text chunks. Lines end in CRLF, LF or CR, and may be cut anywhere
 * between chunks; an event is dispatched at the blank line after it (one with no data is
 * dropped), and an unfinished event at the end of the stream is dropped.
 */
export async function* sseEvents(chunks: AsyncIterable<string> | Iterable<string>): AsyncGenerator<SseEvent> {
  let pending = '';
  let id = '';
  let event = '';
  let data: string[] = [];
  for await (const chunk of chunks) {
    const text = pending + chunk;
    // A CR at the very end may be the first half of a CRLF: it waits for the next chunk.
    const end = text.endsWith('\r') ? text.length - 1 : text.length;
    const lines = text.slice(0, end).split(/\r\n|\r|\n/);
    pending = lines.pop()! + text.slice(end);
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        data = [];
        event = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const [field, value] = splitField(line);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  }
}

/** A response body's text, chunk by chunk; a failed read (the connection dropped) ends it. */
async function* bodyText(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const chunk = await reader.read().catch(() => undefined);
    if (!chunk || chunk.done) return;
    yield decoder.decode(chunk.value, { stream: true });
  }
}

/** The events of a text/event-stream response body. */
export function readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  return sseEvents(bodyText(body));
}
