import { COMMANDS, Id, ResolveOutcomeReply, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export const RESOLVED_OUTCOMES = ['succeeded', 'failed'] as const;
export type ResolvedOutcome = (typeof RESOLVED_OUTCOMES)[number];

export interface ActionResolveOptions {
  /** The attempt's task. */
  readonly task: string;
  readonly outcome: string;
  /** Why: the evidence outside the log the director relied on (recorded). */
  readonly note: string;
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`resolved_by`). */
  readonly principal: string;
  readonly json?: boolean;
}

/**
 * `writ action resolve <attempt_id> --task <task_id> --outcome succeeded|failed --note <text>
 * --key <file> --principal <director>`: signs an OutcomeResolution as a compact EdDSA JWS with
 * the director's key and sends it to `<root>.qry.executor.resolve-outcome`. The executor decides
 * (signature, director, not an agent, not the action's proposer, fresh, the attempt's last
 * execution has outcome unknown) and appends `execution.outcome_resolved`; the orchestrator then
 * settles the attempt and the receipt service receipts it. Nothing is re-run. `already_resolved`
 * is a success (the standing resolution is printed).
 */
export async function actionResolve(attemptIdArg: string, options: ActionResolveOptions, conn: Connection, io: CliIo): Promise<ResolveOutcomeReply> {
  const attemptId = parseContract('attempt id', Id, attemptIdArg);
  const taskId = parseContract('--task', Id, options.task);
  if (!(RESOLVED_OUTCOMES as readonly string[]).includes(options.outcome)) {
    throw new CliError('CLI_USAGE', `--outcome must be one of ${RESOLVED_OUTCOMES.join(', ')}`, { details: { outcome: options.outcome } });
  }
  const director = await directorSigner(io, options.key, options.principal);
  const resolutionJws = await director.sign(SIGNED_REQUESTS.outcomeResolution, {
    task_id: taskId,
    attempt_id: attemptId,
    outcome: options.outcome as ResolvedOutcome,
    note: options.note,
  });
  const body = { task_id: taskId, attempt_id: attemptId, resolution_jws: resolutionJws };
  const reply = await sendSignedRequest(conn, COMMANDS.executorResolveOutcome, body, ResolveOutcomeReply, 'ResolveOutcomeReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.attempt_id)} (task ${cell(reply.task_id)}) as ${cell(reply.outcome)} by ${cell(reply.resolved_by)} at ${cell(reply.resolved_at)}`,
  );
  return reply;
}
