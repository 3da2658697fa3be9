import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { HarnessError } from './errors.js';

/**
 * Ports for harness components, unique across every process of a test run. Asking the kernel for
 * port 0 and closing it again is not enough: the kernel may hand the same port to the next caller
 * (one nats-server got the same port for clients and routes), and a port handed out is free until
 * the component binds it, while other processes look for ports too. So each port handed out is
 * reserved machine-wide by a file named after it holding the reserving process's pid (created
 * exclusively); a reservation whose process is gone is taken over. Ports come from below the
 * kernel's ephemeral range, which outgoing connections use.
 */
const LOWEST = 10_000;
const RESERVATIONS = path.join(os.tmpdir(), 'flotilla-ports');

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const span = ephemeralLow() - LOWEST;
// A random start, so that processes starting together walk different parts of the range.
let cursor = Math.floor(Math.random() * span);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function claim(file: string): boolean {
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Reserves `port` for this process; false when a live process holds it. */
function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const file = path.join(RESERVATIONS, String(port));
  if (claim(file)) return true;
  let holder = 0;
  try {
    holder = Number(readFileSync(file, 'utf8'));
  } catch {
    // Released meanwhile: try once more below.
  }
  if (holder === process.pid || (holder > 0 && alive(holder))) return false;
  try {
    unlinkSync(file);
  } catch {
    // Another process took it over first.
  }
  return claim(file);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** An unused loopback port no other live harness process holds; this process keeps it. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < span; tries++) {
    const port = LOWEST + (cursor++ % span);
    if (reserve(port) && (await canListen(port))) return port;
  }
  throw new HarnessError('PORT_TAKEN', 'ports', `no free port in 127.0.0.1:${LOWEST}-${LOWEST + span - 1}`, '');
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
