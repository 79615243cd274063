import { COMMANDS, Id, ResurrectCellReply, Text, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface CellResurrectOptions {
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`resurrected_by`). */
  readonly principal: string;
  /** Why (recorded in the cell's decisions log). */
  readonly note?: string;
  readonly json?: boolean;
}

/**
 * `writ cell resurrect <cell_id> --key <file> --principal <director> [--note <text>]`: signs a
 * CellResurrection (compact EdDSA JWS) with the director's key and sends it to
 * `<root>.qry.executor.resurrect-cell`. The executor checks the signer (active key, role
 * director, not an agent, fresh), the kernel checks the cell (CLOSED, within its grace), and
 * the cell comes back from its graveyard (or its last checkpoint on another host):
 * `cell.resurrected` on `writ.evt.cell.<cell_id>`. Refusals exit with their code
 * (CELL_GRACE_EXPIRED, CELL_TRANSITION_INVALID, EXECUTOR_CELL_*).
 */
export async function cellResurrect(cellIdArg: string, options: CellResurrectOptions, conn: Connection, io: CliIo): Promise<ResurrectCellReply> {
  const cellId = parseContract('cell id', Id, cellIdArg);
  const note = options.note === undefined ? undefined : parseContract('--note', Text, options.note);
  const director = await directorSigner(io, options.key, options.principal);
  const resurrectionJws = await director.sign(SIGNED_REQUESTS.cellResurrection, { cell_id: cellId, ...(note === undefined ? {} : { note }) });
  const reply = await sendSignedRequest(conn, COMMANDS.executorResurrectCell, { cell_id: cellId, resurrection_jws: resurrectionJws }, ResurrectCellReply, 'ResurrectCellReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.cell_id)} from its ${reply.restored_from === 'graveyard' ? 'graveyard' : `checkpoint ${cell(reply.checkpoint_id)}`} by ${cell(reply.resurrected_by)}; active until ${cell(reply.active_expires_at)}`,
  );
  return reply;
}
