import net from 'node:net';
import { HarnessError } from './errors.js';

/** Asks the kernel for an unused loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
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
