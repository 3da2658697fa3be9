import { readFileSync } from 'node:fs';
import net from 'node:net';
import { HarnessError } from './errors.js';

/**
 * Ports are handed out below the kernel's ephemeral range, from a slice of their own per vitest
 * worker. Asking the kernel for port 0 and closing it again is not enough: the kernel may hand
 * the same port to the next caller (one nats-server got the same port for clients and routes),
 * and outgoing connections of every process take ephemeral ports too.
 */
const LOWEST = 10_000;
const SLICES = 8;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + SLICES * 100 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const sliceSize = Math.floor((ephemeralLow() - LOWEST) / SLICES);
const slice = Number(process.env.VITEST_POOL_ID ?? 0) % SLICES;
const sliceStart = LOWEST + slice * sliceSize;
// A random start so that runs one after another do not reuse the same ports first.
let cursor = Math.floor(Math.random() * sliceSize);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** An unused loopback port that this process has not handed out before (until its slice wraps). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < sliceSize; tries++) {
    const port = sliceStart + (cursor++ % sliceSize);
    if (await canListen(port)) return port;
  }
  throw new HarnessError(
    'PORT_TAKEN',
    'ports',
    `no free port in 127.0.0.1:${sliceStart}-${sliceStart + sliceSize - 1}`,
    '',
  );
}

/** Fails naming the component when a fixed port is already in use. */
export async function assertPortFree(component: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err) =>
      reject(new HarnessError('PORT_TAKEN', component, `127.0.0.1:${port} is already in use`, '', { cause: err })),
    );
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
  });
}
