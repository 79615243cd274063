import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { loadReceiptConfig, receiptSubjects } from './config.js';

describe('receipt config', () => {
  it('has documented defaults', () => {
    expect(loadReceiptConfig({})).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4223',
      http: { port: 8086, host: '127.0.0.1' },
      subjectRoot: 'writ',
      streams: { events: 'WRIT_EVENTS', eventsPrefix: 'writ.evt', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ', replicas: 1 },
      principalId: 'writ-receipt',
      keyFile: '/var/lib/writ/keys/receipt.jwk.json',
      keys: { dir: '/var/lib/writ/keys/receipt', retireAfterSeconds: 300, checkIntervalMs: 30_000, freshnessSeconds: 300 },
      concurrency: 16,
      tlog: { logId: 'writ-receipts', treeHeadIntervalMs: 10_000 },
    });
  });

  it('given the key variables, then the keyring uses them; the key directory defaults to the key file without .jwk.json; rotate-key derives from the root', () => {
    expect(loadReceiptConfig({ WRIT_RECEIPT_KEY_FILE: '/keys/r.jwk.json' }).keys.dir).toBe('/keys/r');
    const config = loadReceiptConfig({
      WRIT_RECEIPT_KEY_DIR: '/shared/receipt',
      WRIT_RECEIPT_KEY_RETIRE_SECONDS: '60',
      WRIT_RECEIPT_KEY_CHECK_SECONDS: '5',
      WRIT_RECEIPT_FRESHNESS_SECONDS: '30',
      WRIT_RECEIPT_CONCURRENCY: '64',
    });
    expect(config).toMatchObject({ keys: { dir: '/shared/receipt', retireAfterSeconds: 60, checkIntervalMs: 5_000, freshnessSeconds: 30 }, concurrency: 64 });
    expect(receiptSubjects('t_1').rotateKey).toBe('t_1.qry.receipt.rotate-key');
  });

  it('given WRIT_TLOG_ID and WRIT_TLOG_STH_INTERVAL_MS, then the transparency log uses them; the query subjects derive from the root', () => {
    expect(loadReceiptConfig({ WRIT_TLOG_ID: 'audit-2026', WRIT_TLOG_STH_INTERVAL_MS: '250' }).tlog).toEqual({ logId: 'audit-2026', treeHeadIntervalMs: 250 });
    const subjects = receiptSubjects('t_1');
    expect([subjects.treeHead, subjects.inclusionProof, subjects.consistencyProof]).toEqual(['t_1.qry.receipt.tree-head', 't_1.qry.receipt.inclusion-proof', 't_1.qry.receipt.consistency-proof']);
  });

  it.each([
    ['WRIT_TLOG_ID', 'not.a.token'],
    ['WRIT_TLOG_STH_INTERVAL_MS', '10'],
    ['WRIT_TLOG_STH_INTERVAL_MS', 'soon'],
    ['WRIT_RECEIPT_CONCURRENCY', '0'],
    ['WRIT_RECEIPT_CONCURRENCY', '257'],
    // the replaced key would retire before a replica sharing the directory has switched away from it
    ['WRIT_RECEIPT_KEY_RETIRE_SECONDS', '59'],
    ['WRIT_RECEIPT_FRESHNESS_SECONDS', '0'],
  ])('given %s=%s, then the config is refused (RUNTIME_CONFIG_INVALID)', (name, value) => {
    let error: unknown;
    try {
      loadReceiptConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
  });

  it('derives every subject from the root', () => {
    expect(loadReceiptConfig({ WRIT_SUBJECT_ROOT: 't_1' }).streams.eventsPrefix).toBe('t_1.evt');
    const subjects = receiptSubjects('t_1');
    expect([subjects.issue, subjects.commands, subjects.dlq, subjects.deadLetter('issue')]).toEqual(['t_1.cmd.receipt.issue', 't_1.cmd.>', 't_1.dlq.>', 't_1.dlq.receipt.issue']);
  });

  it('fails fast on a bad variable (RUNTIME_CONFIG_INVALID)', () => {
    let error: unknown;
    try {
      loadReceiptConfig({ WRIT_HTTP_PORT: '99999' });
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
  });
});
