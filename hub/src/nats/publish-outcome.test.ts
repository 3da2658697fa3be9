import { describe, expect, it } from 'vitest';
import { ClosedConnectionError, InvalidArgumentError, InvalidSubjectError } from '@nats-io/transport-node';
import { ackOutcome, publishErrorOutcome } from './publish-outcome.js';

const json = (v: unknown): { data: Uint8Array } => ({ data: new TextEncoder().encode(JSON.stringify(v)) });
/** nats-server's answer to a refused publish (errors.json codes and descriptions). */
const apiError = (err_code: number, description: string) => json({ error: { code: 400, err_code, description } });

describe('ackOutcome', () => {
  it.each([
    ['a stored message', json({ stream: 'DESIRED', seq: 7 })],
    ['a duplicate JetStream dropped by msgID', json({ stream: 'DESIRED', seq: 7, duplicate: true })],
  ])('acknowledges %s', (_what, reply) => {
    expect(ackOutcome(reply)).toEqual({ result: 'acked' });
  });

  it.each([
    ['the stream max_msg_size', apiError(10054, 'message size exceeds maximum allowed'), 'message_size'],
    ['a full stream (messages)', apiError(10077, 'maximum messages exceeded'), 'stream_full'],
    ['a full stream (bytes)', apiError(10077, 'maximum bytes exceeded'), 'stream_full'],
    ['another store failure', apiError(10077, 'some store failure'), 'other'],
    ['a wrong expected stream', apiError(10060, 'expected stream does not match'), 'other'],
  ])('refuses over %s with the reason and the server description', (_what, reply, reason) => {
    const outcome = ackOutcome(reply);
    expect(outcome).toMatchObject({ result: 'refused', reason });
    expect(outcome.result === 'refused' && outcome.detail).toContain(
      JSON.parse(new TextDecoder().decode(reply.data)).error.description,
    );
  });

  it('takes a 503 (no stream answered) as no answer: retried, not held back', () => {
    expect(ackOutcome({ status: 503, statusDescription: 'No Responders', data: new Uint8Array() })).toEqual({
      result: 'unacked',
    });
  });

  it.each([
    ['another status', { status: 408, statusDescription: 'Request Timeout', data: new Uint8Array() }],
    ['unreadable bytes', { data: new Uint8Array([0xff, 0xfe]) }],
    ['JSON that is no acknowledgement', json({ hello: 'world' })],
    ['a JSON scalar', json(42)],
    ['an error without fields', json({ error: {} })],
  ])('refuses %s as other', (_what, reply) => {
    expect(ackOutcome(reply)).toMatchObject({ result: 'refused', reason: 'other' });
  });

  it('bounds the description it keeps', () => {
    const outcome = ackOutcome(apiError(10999, 'x'.repeat(5000)));
    expect(outcome.result === 'refused' && outcome.detail.length).toBe(200);
  });
});

describe('publishErrorOutcome', () => {
  it("refuses a message above nats-server's max_payload (the client throws before sending)", () => {
    expect(publishErrorOutcome(InvalidArgumentError.format('payload', 'max_payload size exceeded'))).toEqual({
      result: 'refused',
      reason: 'max_payload',
      detail: "'payload' max_payload size exceeded",
    });
  });

  it('refuses an illegal subject', () => {
    expect(publishErrorOutcome(new InvalidSubjectError('a b'))).toMatchObject({ result: 'refused', reason: 'other' });
  });

  it("leaves the connection's own failures to the caller", () => {
    expect(publishErrorOutcome(new ClosedConnectionError())).toBeUndefined();
    expect(publishErrorOutcome(new InvalidArgumentError('headers are not available'))).toBeUndefined();
    expect(publishErrorOutcome(new Error('boom'))).toBeUndefined();
  });
});
