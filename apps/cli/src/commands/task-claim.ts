import {
  BlockedClaim,
  COMMANDS,
  ClaimReply,
  Correction,
  DoneClaim,
  Id,
  WritError,
  parseContract,
  type EventEnvelope,
} from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { setTimeout as delay } from 'node:timers/promises';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';
import { seconds } from './task-create.js';

export type ClaimCommand = 'done' | 'blocked' | 'correct';

export interface TaskClaimOptions {
  /** Path of the agent's PRIVATE JWK. */
  readonly key: string;
  /** The agent: the task's owner, who alone may claim for it. */
  readonly principal: string;
  /** `done`: seconds to wait for the verdict while Writ runs the verify command (default 60; 0: do not wait). */
  readonly wait?: string;
  readonly json?: boolean;
}

const SUBJECTS = { done: COMMANDS.orchestratorClaimDone, blocked: COMMANDS.orchestratorClaimBlocked, correct: COMMANDS.orchestratorClaimCorrection } as const;

/**
 * `writ task done <task_id> done.json`, `writ task blocked <task_id> blocked.json`,
 * `writ task correct <task_id> correction.json` (docs/task-claims.md): checks the
 * file against its contract, signs `{ task_id, claim | correction, claimed_by,
 * claimed_at }` with the agent's key (typ `writ-done-claim+jws`, …) and sends it
 * to `<root>.qry.orchestrator.claim-*`. The orchestrator records and judges it.
 * A refused claim prints every refusal and exits with the first code; a done
 * claim being verified (Writ runs the brief's verify command as a governed
 * action) is followed in the task stream until its verdict or `--wait` seconds.
 */
export async function taskClaim(command: ClaimCommand, taskIdArg: string, file: string, options: TaskClaimOptions, conn: Connection, io: CliIo): Promise<ClaimReply> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const document = await readJsonFile(io.cwd, file, command === 'correct' ? 'correction' : `${command}.json`);
  // The file is checked before the key is read: a claim can be validated without it.
  const body =
    command === 'done'
      ? ({ kind: 'done', claim: parseContract('DoneClaim', DoneClaim, document) } as const)
      : command === 'blocked'
        ? ({ kind: 'blocked', claim: parseContract('BlockedClaim', BlockedClaim, document) } as const)
        : ({ kind: 'correct', correction: parseContract('Correction', Correction, document) } as const);
  const signer = await directorSigner(io, options.key, options.principal);
  let jws: string;
  switch (body.kind) {
    case 'done':
      jws = await signer.sign(SIGNED_REQUESTS.doneClaim, { task_id: taskId, claim: body.claim });
      break;
    case 'blocked':
      jws = await signer.sign(SIGNED_REQUESTS.blockedClaim, { task_id: taskId, claim: body.claim });
      break;
    case 'correct':
      jws = await signer.sign(SIGNED_REQUESTS.correction, { task_id: taskId, correction: body.correction });
      break;
  }
  let reply = await sendSignedRequest(conn, SUBJECTS[command], { task_id: taskId, claim_jws: jws }, ClaimReply, 'ClaimReply');
  const waitSeconds = seconds(options.wait, 60);
  if (command === 'done' && reply.status === 'verifying' && waitSeconds > 0) reply = await followVerdict(conn, reply, waitSeconds, io);
  io.stdout(options.json === true ? JSON.stringify(reply) : describe(reply));
  const first = reply.refusals[0];
  if (reply.status === 'refused' && first !== undefined) {
    throw new WritError(first.code, `${reply.kind} claim ${reply.claim_id} refused: ${reply.refusals.map((r) => r.code).join(', ')}`, { details: { claim_id: reply.claim_id } });
  }
  return reply;
}

function describe(reply: ClaimReply): string {
  const head = `${cell(reply.status)} ${reply.kind} claim ${cell(reply.claim_id)} (task ${cell(reply.task_id)})${reply.duplicate ? ' [already recorded]' : ''}`;
  const lines = [head];
  if (reply.verify_action_request_id !== null) lines.push(`  verify run: ${cell(reply.verify_action_request_id)}${reply.status === 'verifying' ? ' (the verdict follows in the task stream: writ task <task_id>)' : ''}`);
  if (reply.question_id !== null) lines.push(`  question in the approval inbox: ${cell(reply.question_id)} (writ approvals)`);
  for (const refusal of reply.refusals) lines.push(`  ${cell(refusal.code)}: ${cell(refusal.message, 300)}`);
  return lines.join('\n');
}

/** Reads the task stream until the claim's verdict is there, or `waitSeconds` pass; the reply as the log then says. */
async function followVerdict(conn: Connection, reply: ClaimReply, waitSeconds: number, io: CliIo): Promise<ClaimReply> {
  const nc = await connectNats(conn);
  try {
    const store = await attachEventLog(nc, conn);
    const deadline = io.now().getTime() + waitSeconds * 1000;
    for (;;) {
      const verdict = (await store.read(reply.task_id))
        .map((stored) => stored.event)
        .find((event: EventEnvelope) => (event.event_type === 'claim.done_accepted' || event.event_type === 'claim.done_refused') && event.payload['claim_id'] === reply.claim_id);
      if (verdict !== undefined) {
        const refusals = verdict.event_type === 'claim.done_refused' ? (verdict.payload['refusals'] as ClaimReply['refusals']) : [];
        return parseContract('ClaimReply', ClaimReply, { ...reply, status: verdict.event_type === 'claim.done_accepted' ? 'accepted' : 'refused', refusals });
      }
      if (io.now().getTime() >= deadline) return reply;
      await delay(500);
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
}
