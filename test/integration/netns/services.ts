/**
 * The network services of the namespace under test: a DNS responder on <address>:53 answering
 * <name> with <answer>, and a TCP listener on <address>:<port> standing in for the API server.
 *   node --import tsx services.ts <address> <tcp-port> <name> <answer>
 */
import { createServer } from 'node:net';
import { serveDns } from '../../support/fake-dns.ts';

const [address, port, name, answer] = process.argv.slice(2);
if (!address || !port || !name || !answer)
  throw new Error('usage: services.ts <address> <port> <name> <answer>');
await serveDns({ [name]: [answer] }, address, 53, (q) => process.stdout.write(`query ${q}\n`));
const tcp = createServer((socket) => socket.destroy());
await new Promise<void>((resolve) => tcp.listen(Number(port), address, resolve));
process.stdout.write('ready\n');
tcp.on('connection', () => process.stdout.write('connection\n'));
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
