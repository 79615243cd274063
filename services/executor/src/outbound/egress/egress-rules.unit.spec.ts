import { describe, expect, it } from 'vitest';
import { forbiddenTarget } from './egress-proxy.js';
import { egressAllowed, egressRules } from './egress-rules.js';

describe('egress rules (a grant resource_scope.hosts as the proxy applies it)', () => {
  it('given a host without a port, when checked, then 80 and 443 of exactly that host are allowed and nothing else', () => {
    const rules = egressRules(['api.example.com']);
    expect(egressAllowed(rules, 'api.example.com', 443)).toBe(true);
    expect(egressAllowed(rules, 'API.example.com', 80)).toBe(true);
    expect(egressAllowed(rules, 'api.example.com', 22)).toBe(false);
    expect(egressAllowed(rules, 'x.api.example.com', 443)).toBe(false);
    expect(egressAllowed(rules, 'api.example.com.evil.test', 443)).toBe(false);
    expect(egressAllowed(rules, 'evilapi.example.com', 443)).toBe(false);
  });

  it('given host:port, when checked, then only that port', () => {
    const rules = egressRules(['127.0.0.1:8080', 'registry.test:5000']);
    expect(egressAllowed(rules, '127.0.0.1', 8080)).toBe(true);
    expect(egressAllowed(rules, '127.0.0.1', 80)).toBe(false);
    expect(egressAllowed(rules, 'registry.test', 5000)).toBe(true);
    expect(egressAllowed(rules, 'registry.test', 443)).toBe(false);
  });

  it('given *.suffix, when checked, then names strictly below it, never the suffix itself, never an IP', () => {
    const rules = egressRules(['*.example.com']);
    expect(egressAllowed(rules, 'a.example.com', 443)).toBe(true);
    expect(egressAllowed(rules, 'a.b.example.com', 80)).toBe(true);
    expect(egressAllowed(rules, 'example.com', 443)).toBe(false);
    expect(egressAllowed(rules, 'aexample.com', 443)).toBe(false);
  });

  it('given a bare *, an empty, malformed or out-of-range pattern, when read, then it allows nothing', () => {
    expect(egressRules(['*', '', 'a b', 'host:0', 'host:70000', 'host:x', '*.', '*.1.2.3.4'])).toEqual([]);
    expect(egressAllowed(egressRules(['*']), 'anything.test', 443)).toBe(false);
  });

  it('given a malformed requested host, when checked, then refused', () => {
    const rules = egressRules(['api.example.com']);
    expect(egressAllowed(rules, 'api.example.com/..', 443)).toBe(false);
    expect(egressAllowed(rules, '', 443)).toBe(false);
  });

  it('given resolved addresses, when a granted name leads to loopback, link-local, unspecified or multicast, then that target is forbidden', () => {
    for (const address of ['127.0.0.1', '127.9.9.9', '169.254.169.254', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', '::ffff:127.0.0.1']) expect(forbiddenTarget(address)).toBe(true);
    for (const address of ['10.1.2.3', '192.0.2.10', '93.184.216.34', '2001:db8::1']) expect(forbiddenTarget(address)).toBe(false);
  });
});
