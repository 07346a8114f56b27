import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port nothing listens on now: the kernel's pick, released again for the caller
 * to hand to a process that listens on it (one that cannot take port 0, as nginx, or a
 * service a test expects to find nothing on).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
