#!/usr/bin/env node
// The wires between the network namespaces of a loopback NATS cluster (scripts/nats-cluster/cluster.mjs).
// Each node runs in a namespace of its own, where 127.0.0.1 is its alone; a unix socket is a file, so it
// is reachable from every namespace. One link process runs in each node's namespace and one in the host's:
// each listener it is given (a TCP port on this namespace's loopback, or a unix socket) forwards every
// connection to its target (a TCP port here, or a unix socket another link process serves).
//
//   node loopback-link.mjs <spec.json>
//   spec: { "links": [{ "listen": { "tcp": 6224 } | { "unix": "/run/.../n2.route.sock" },
//                       "to": { "tcp": 6224 } | { "unix": "..." }, "route": true }] }
//
// SIGUSR1 cuts the links marked `route` (the node's cluster links: a partition of the node from its
// peers, its clients still connected to it): their connections are destroyed and new ones are closed
// at once. SIGUSR2 heals them. SIGTERM stops. Nothing but the bytes crosses; no address but loopback.

import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let cut = false;
const routeSockets = new Set();
const say = (text) => process.stderr.write(`[loopback-link ${process.pid}] ${text}\n`);

const endpoint = (target) => (target.tcp !== undefined ? { host: '127.0.0.1', port: target.tcp } : { path: target.unix });
const shown = (target) => (target.tcp !== undefined ? `127.0.0.1:${target.tcp}` : target.unix);

for (const link of spec.links) {
  const server = net.createServer({ pauseOnConnect: true }, (inbound) => {
    if (link.route && cut) return inbound.destroy();
    const outbound = net.connect(endpoint(link.to));
    const pair = [inbound, outbound];
    if (link.route) for (const socket of pair) routeSockets.add(socket);
    const close = () => {
      for (const socket of pair) {
        routeSockets.delete(socket);
        socket.destroy();
      }
    };
    for (const socket of pair) socket.on('error', close).on('close', close);
    inbound.setNoDelay(true);
    outbound.setNoDelay(true);
    outbound.on('connect', () => {
      inbound.pipe(outbound);
      outbound.pipe(inbound);
      inbound.resume();
    });
  });
  if (link.listen.unix !== undefined) rmSync(link.listen.unix, { force: true });
  server.on('error', (error) => {
    say(`cannot listen on ${shown(link.listen)}: ${error.message}`);
    process.exit(1);
  });
  server.listen(link.listen.tcp !== undefined ? { host: '127.0.0.1', port: link.listen.tcp } : { path: link.listen.unix });
}

process.on('SIGUSR1', () => {
  cut = true;
  for (const socket of routeSockets) socket.destroy();
  routeSockets.clear();
  say('route links cut');
});
process.on('SIGUSR2', () => {
  cut = false;
  say('route links healed');
});
process.on('SIGTERM', () => process.exit(0));
