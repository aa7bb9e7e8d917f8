import { connect } from 'node:net';

/** Opens a TCP connection and closes it at once: reachability only, no bytes sent. */
export function tcpConnect(host: string, port: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const socket = connect({ host, port });
    const onAbort = () => {
      socket.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(err);
    });
  });
}
