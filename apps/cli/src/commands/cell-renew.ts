import { COMMANDS, Id, RenewCellReply, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface CellRenewOptions {
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`renewed_by`). */
  readonly principal: string;
  /** How much later the cell's window ends (`2h`, `90m`, `1h30m`); absent: the cell policy's active TTL. */
  readonly extend?: string;
  readonly json?: boolean;
}

/** The seed's ceiling on an activation window (Lazarus 4.2); a cell's own policy may allow less, which the executor says. */
const MAX_EXTEND_MS = 24 * 3_600_000;
const DURATION = /^(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,6})s)?$/;

/**
 * `--extend`: hours, minutes and seconds in that order, each optional (`2h`, `90m`, `1h30m`,
 * `45s`), from 1 s to 24 h, as milliseconds. CLI_USAGE otherwise (exit 2).
 */
export function parseDuration(value: string, flag = '--extend'): number {
  const match = DURATION.exec(value.trim());
  const [, h = '0', m = '0', s = '0'] = match ?? [];
  const ms = match === null || value.trim() === '' ? Number.NaN : (Number(h) * 3_600 + Number(m) * 60 + Number(s)) * 1_000;
  if (!Number.isSafeInteger(ms) || ms < 1_000 || ms > MAX_EXTEND_MS) {
    throw new CliError('CLI_USAGE', `${flag} must be a duration from 1s to 24h written as hours, minutes and seconds (2h, 90m, 1h30m, 45s), not ${JSON.stringify(value)}`, {
      details: { flag, value },
    });
  }
  return ms;
}

/**
 * `writ cell renew <cell_id> --key <file> --principal <director> [--extend <duration>]`: signs a
 * CellRenewal (compact EdDSA JWS, `typ` writ-cell-renew+jws) with the director's key and sends
 * it to `<root>.qry.executor.renew-cell`. The executor checks the signer (active key, role
 * director, not an agent, fresh), the kernel checks the cell (ACTIVE, CHECKPOINTING or DOWNED,
 * within the policy's ceiling from activation), and `cell.ttl_renewed` is appended to
 * `writ.evt.cell.<cell_id>`. Refusals exit 1 with their code (CELL_TTL_CAP_EXCEEDED,
 * CELL_TRANSITION_INVALID, CELL_ACTIVE_TTL_EXPIRED, EXECUTOR_CELL_*).
 */
export async function cellRenew(cellIdArg: string, options: CellRenewOptions, conn: Connection, io: CliIo): Promise<RenewCellReply> {
  const cellId = parseContract('cell id', Id, cellIdArg);
  const extendMs = options.extend === undefined ? undefined : parseDuration(options.extend);
  const director = await directorSigner(io, options.key, options.principal);
  const renewalJws = await director.sign(SIGNED_REQUESTS.cellRenewal, { cell_id: cellId, ...(extendMs === undefined ? {} : { extend_ms: extendMs }) });
  const reply = await sendSignedRequest(conn, COMMANDS.executorRenewCell, { cell_id: cellId, renewal_jws: renewalJws }, RenewCellReply, 'RenewCellReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${reply.status === 'renewed' ? 'renewed' : 'already renewed'} ${cell(reply.cell_id)} by ${cell(reply.renewed_by)}; active until ${cell(reply.active_expires_at)} (was ${cell(reply.previous_expires_at)}; renewable up to ${cell(reply.max_expires_at)})`,
  );
  return reply;
}
