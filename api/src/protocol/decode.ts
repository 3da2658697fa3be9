/**
 * Decoding of protocol messages: bytes → JSON → schema check. Never throws; receivers turn a
 * failure into a dropped-and-counted message.
 */
import { Compile } from 'typebox/compile';
import type { Static, TSchema } from 'typebox';
import { DesiredMessage, HeartbeatMessage, StatusMessage } from './messages.js';

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; reason: 'json' | 'schema'; detail: string };

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
