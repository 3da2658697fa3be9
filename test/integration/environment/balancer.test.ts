import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startBalancer, type Balancer } from '@flotilla/test';

/** A TCP server that answers every connection with its own name, then closes it. */
async function namedServer(name: string): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((s) => s.end(name));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1');
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString()));
    s.on('error', reject);
  });
}

let balancer: Balancer | undefined;
afterEach(async () => {
  await balancer?.close();
  balancer = undefined;
});

describe('the test balancer in front of replicas', () => {
  it('hands connections to each backend in turn and skips one that refuses', async () => {
    const a = await namedServer('a');
    const b = await namedServer('b');
    balancer = await startBalancer([
      { host: '127.0.0.1', port: a.port },
      { host: '127.0.0.1', port: b.port },
    ]);
    const answers = [await ask(balancer.port), await ask(balancer.port), await ask(balancer.port)];
    expect(answers.sort()).toEqual(['a', 'a', 'b']);
    await a.close();
    const after = [await ask(balancer.port), await ask(balancer.port), await ask(balancer.port)];
    expect(after).toEqual(['b', 'b', 'b']);
    await b.close();
  });
});
