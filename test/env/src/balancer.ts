/**
 * One address in front of several replicas, as a Kubernetes Service or a cloud load balancer puts
 * one in front of the hub's pods: a TCP proxy that hands each new connection to the next backend
 * in turn and, when a backend refuses the connection (its process is gone), to the one after.
 * TLS passes through untouched, so clients verify the replicas' own certificate. Connections to a
 * backend that dies are cut, as they would be.
 */
import net from 'node:net';

export interface Balancer {
  /** 127.0.0.1:PORT clients connect to. */
  readonly host: string;
  readonly port: number;
  /** Replaces the backends (host:port pairs); open connections stay where they are. */
  setBackends(backends: readonly { host: string; port: number }[]): void;
  close(): Promise<void>;
}

export async function startBalancer(backends: readonly { host: string; port: number }[] = []): Promise<Balancer> {
  let targets = [...backends];
  let next = 0;
  const open = new Set<net.Socket>();

  const dial = (client: net.Socket, tried: number): void => {
    if (targets.length === 0 || tried >= targets.length) {
      client.destroy();
      return;
    }
    const target = targets[next++ % targets.length]!;
    const upstream = net.connect(target.port, target.host);
    open.add(upstream);
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      client.pipe(upstream).pipe(client);
      const cut = (): void => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', cut).on('close', cut);
      client.on('error', cut).on('close', cut);
      client.resume();
    });
    upstream.once('error', () => {
      open.delete(upstream);
      upstream.destroy();
      dial(client, tried + 1);
    });
    upstream.once('close', () => open.delete(upstream));
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    dial(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    setBackends(list) {
      targets = [...list];
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
