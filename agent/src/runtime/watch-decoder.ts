/**
 * Decodes a watch response body: one JSON object per line (`{"type":"ADDED","object":{...}}`),
 * arriving in chunks cut anywhere, in the middle of a line or of a multi-byte UTF-8 character.
 *
 * Lines are found on the raw bytes: a newline byte never occurs inside a multi-byte UTF-8
 * sequence, so a chunk boundary needs no string decoder, and each line is decoded and parsed
 * once. During a scale-up the agent parses several events per pod it creates; this is the
 * cheapest way to get them from the socket to the informer (no readline, no copy of a line that
 * lies within one chunk).
 */
import { AgentError } from '../errors.js';
import type { WatchEvent } from './list-watch.js';

const NEWLINE = 0x0a;

export class WatchDecoder {
  readonly #onEvent: (event: WatchEvent) => void;
  /** The start of a line whose end has not arrived yet. */
  #partial: Buffer[] = [];

  constructor(onEvent: (event: WatchEvent) => void) {
    this.#onEvent = onEvent;
  }

  /**
   * Delivers every complete line in `chunk` (and before it) in order. Throws AGENT_ERR_WATCH for a
   * line that is not a watch event; what `onEvent` throws is passed on as it is.
   */
  write(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      if (this.#partial.length === 0) {
        this.#line(chunk.toString('utf8', start, nl));
      } else {
        this.#partial.push(chunk.subarray(start, nl));
        const bytes = Buffer.concat(this.#partial);
        this.#partial = [];
        this.#line(bytes.toString('utf8'));
      }
      start = nl + 1;
    }
    // subarray shares the chunk's memory: nothing is copied until the line is complete.
    if (start < chunk.length) this.#partial.push(chunk.subarray(start));
  }

  /**
   * The body ended. A last line without its newline is still delivered if it is a whole event;
   * anything else left over is a truncated event and throws AGENT_ERR_WATCH.
   */
  end(): void {
    if (this.#partial.length === 0) return;
    const text = Buffer.concat(this.#partial).toString('utf8');
    this.#partial = [];
    this.#line(text);
  }

  #line(text: string): void {
    if (isBlank(text)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new AgentError('AGENT_ERR_WATCH', `watch sent a line that is not JSON: ${excerpt(text)}`, { cause: err });
    }
    const event = parsed as Partial<WatchEvent> | null;
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
      throw new AgentError('AGENT_ERR_WATCH', `watch sent a line that is not an event: ${excerpt(text)}`);
    }
    // The parsed line already has the WatchEvent shape: hand it on without another allocation.
    this.#onEvent(event as WatchEvent);
  }
}

/** Only whitespace (a keep-alive newline or a CR of CRLF): no event. Stops at the first other character. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

function excerpt(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
