#!/usr/bin/env node
// A director resolves a pending approval: fetches its packet (GET /v1/approvals/<id>), checks
// that the packet shown hashes to the packet the approval records (packet_ref), signs the
// ApprovalResolution { approval_id, decision, packet_hash, resolved_by, resolved_at, note? } over
// that hash as a compact EdDSA JWS with its key, and posts it to
// POST /v1/approvals/<id>/<grant|deny> with the task id. The approval service refuses a
// resolution over any other packet (APPROVAL_RESOLUTION_PACKET_STALE).
//
//   node examples/agent/approve.mjs grant <approval_id> --task <task_id> --director <id> --key <private-jwk-file> [--note <text>]
//   node examples/agent/approve.mjs deny  <approval_id> --task <task_id> --director <id> --key <private-jwk-file>
//
// The key file is the PRIVATE JWK `writ principal keygen --out` wrote; the director must be
// registered with role director (README.md). Environment: WRIT_URL (http://127.0.0.1:8080),
// WRIT_SUBJECT_ROOT (writ: the API's audience, writ-http:<root>). The packet is read with a bearer
// token the director signs (typ writ-http+jws).

import { createHash, createPrivateKey, sign } from 'node:crypto';
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

// RFC 8785 (JCS) for the JSON a packet holds (strings, integers, booleans, null, arrays, objects).
const canonical = (value) =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.keys(value)
          .sort()
          .filter((key) => value[key] !== undefined)
          .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
          .join(',')}}`
      : JSON.stringify(value);

// The packet the director decides on, and its hash: SHA-256 of the packet document
// { format: 'writ.approval-packet/1', packet, state_witness? }, which must be the one packet_ref names.
const iat = Math.floor(Date.now() / 1000);
const claims = { sub: values.director, iss: values.director, aud: `writ-http:${process.env.WRIT_SUBJECT_ROOT ?? 'writ'}`, iat, exp: iat + 120 };
const tokenInput = `${b64url(JSON.stringify({ alg: 'EdDSA', typ: 'writ-http+jws', kid: jwk.kid }))}.${b64url(JSON.stringify(claims))}`;
const authorization = `Bearer ${tokenInput}.${b64url(sign(null, Buffer.from(tokenInput), privateKey))}`;
const shown = await fetch(`${API}/v1/approvals/${approvalId}`, { headers: { accept: 'application/json', authorization } });
if (!shown.ok) {
  console.error(`GET /v1/approvals/${approvalId}: ${shown.status} ${await shown.text()}`);
  process.exit(1);
}
const detail = await shown.json();
const document = { format: 'writ.approval-packet/1', packet: detail.packet, ...(detail.state_witness ? { state_witness: detail.state_witness } : {}) };
const packetHash = `sha256:${createHash('sha256').update(canonical(document)).digest('hex')}`;
if (detail.packet_ref !== `artifact:${packetHash}`) {
  console.error(`the packet shown does not hash to the packet approval ${approvalId} records (${detail.packet_ref}); nothing was signed`);
  process.exit(1);
}
console.error(`${decision} ${approvalId}: ${detail.packet?.action_summary ?? '(no summary)'} (packet ${packetHash})`);

const resolution = {
  approval_id: approvalId,
  decision,
  packet_hash: packetHash,
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
