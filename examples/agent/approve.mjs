#!/usr/bin/env node
// A director resolves a pending approval: signs the ApprovalResolution
// { approval_id, decision, resolved_by, resolved_at, note? } as a compact EdDSA JWS with its
// key and posts it to POST /v1/approvals/<id>/<grant|deny> with the task id.
//
//   node examples/agent/approve.mjs grant <approval_id> --task <task_id> --director <id> --key <private-jwk-file> [--note <text>]
//   node examples/agent/approve.mjs deny  <approval_id> --task <task_id> --director <id> --key <private-jwk-file>
//
// The key file is the PRIVATE JWK `writ principal keygen --out` wrote; the director must be
// registered with role director (README.md). Environment: WRIT_URL (http://127.0.0.1:8080).

import { createPrivateKey, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

const API = (process.env.WRIT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const usage = 'usage: approve.mjs <grant|deny> <approval_id> --task <task_id> --director <id> --key <private-jwk-file> [--note <text>]';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { task: { type: 'string' }, director: { type: 'string' }, key: { type: 'string' }, note: { type: 'string' } },
});
const [decision, approvalId] = positionals;
if (!['grant', 'deny'].includes(decision) || !approvalId || !values.task || !values.director || !values.key) {
  console.error(usage);
  process.exit(2);
}

const jwk = JSON.parse(await readFile(values.key, 'utf8'));
if (typeof jwk.d !== 'string' || typeof jwk.kid !== 'string') {
  console.error(`${values.key} must be a PRIVATE Ed25519 JWK with a kid (writ principal keygen --out)`);
  process.exit(2);
}
const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
const b64url = (data) => Buffer.from(data).toString('base64url');

const resolution = {
  approval_id: approvalId,
  decision,
  resolved_by: values.director,
  resolved_at: new Date().toISOString(),
  ...(values.note ? { note: values.note } : {}),
};
const signingInput = `${b64url(JSON.stringify({ alg: 'EdDSA', kid: jwk.kid }))}.${b64url(JSON.stringify(resolution))}`;
const resolutionJws = `${signingInput}.${b64url(sign(null, Buffer.from(signingInput), privateKey))}`;

const response = await fetch(`${API}/v1/approvals/${approvalId}/${decision}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ task_id: values.task, resolution_jws: resolutionJws }),
});
const text = await response.text();
console.log(`${response.status} ${text}`);
process.exitCode = response.ok ? 0 : 1;
