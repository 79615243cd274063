export * from './egress-networks.js';
export * from './egress-proxy.js';
export * from './egress-rules.js';
