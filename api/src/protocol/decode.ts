/**
 * Decoding of protocol messages: bytes → JSON → schema check. Never throws; receivers turn a
 * failure into a dropped-and-counted message.
 */
import { Compile } from 'typebox/compile';
import type { Static, TSchema } from 'typebox';
import { DesiredMessage, HeartbeatMessage, StatusMessage } from './messages.js';

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; reason: 'json' | 'schema'; detail: string };

/**
 * Deepest nesting a message may have (the hub's REST API takes bodies 64 levels deep; a manifest
 * sits two levels below a message's root). JSON.parse reads any depth, but JSON.stringify and
 * other recursive code give up some thousand levels down: a message the receiver could never
 * apply or re-encode is dropped here instead of failing on every redelivery.
 */
export const MAX_MESSAGE_DEPTH = 100;

/** Whether a parsed value nests deeper than `max` levels (iterative: no recursion of its own). */
function deeperThan(value: unknown, max: number): boolean {
  const work: [unknown, number][] = [[value, 1]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [v, depth] = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) work.push([child, depth + 1]);
  }
  return false;
}

/** A decoder for one message schema, compiled once. */
export type Decoder<T> = (data: Uint8Array) => DecodeResult<T>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function makeDecoder<S extends TSchema>(schema: S): Decoder<Static<S>> {
  const validator = Compile(schema);
  return (data) => {
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(data));
    } catch (err) {
      return { ok: false, reason: 'json', detail: err instanceof Error ? err.message : String(err) };
    }
    if (deeperThan(value, MAX_MESSAGE_DEPTH)) {
      return { ok: false, reason: 'schema', detail: `nested deeper than ${MAX_MESSAGE_DEPTH} levels` };
    }
    if (!validator.Check(value)) {
      const first = validator.Errors(value)[0];
      const detail = first ? `${first.instancePath || '/'}: ${first.message}` : 'does not match the schema';
      return { ok: false, reason: 'schema', detail };
    }
    return { ok: true, value: value };
  };
}

export const decodeDesired: Decoder<DesiredMessage> = makeDecoder(DesiredMessage);
export const decodeStatus: Decoder<StatusMessage> = makeDecoder(StatusMessage);
export const decodeHeartbeat: Decoder<HeartbeatMessage> = makeDecoder(HeartbeatMessage);

const utf8Encoder = new TextEncoder();

/** Encodes a message as UTF-8 JSON. */
export function encodeMessage(message: DesiredMessage | StatusMessage | HeartbeatMessage): Uint8Array {
  return utf8Encoder.encode(JSON.stringify(message));
}
