import { ProjectionView } from '@writ/contracts';
import { z } from 'zod';
import type { CliIo } from '../cli-io.js';
import { cell, table } from '../format.js';
import type { WritApi } from '../http-api.js';

/** `GET /v1/projections/status` as this CLI reads it (fields it does not show pass through to --json). */
const ProjectionStatusView = z.looseObject({
  checkpoint: z.int().nonnegative(),
  last_stream_seq: z.int().nonnegative(),
  events_behind: z.int().nonnegative(),
  lag_ms: z.int().nonnegative(),
  views: z.array(z.looseObject({ view: z.string(), rows: z.int().nonnegative(), checksum: z.string().nullable() })),
  last_rebuild: z
    .looseObject({ job_id: z.string(), state: z.string(), views: z.array(z.string()), swapped_at_seq: z.int().nullable(), finished_at: z.string().nullable(), started_at: z.string() })
    .nullable(),
  /** Absent from a projection service older than the quarantine (invariant 10). */
  quarantined: z
    .looseObject({
      total: z.int().nonnegative(),
      by_reason: z.record(z.string(), z.int().nonnegative()),
      latest: z.array(z.looseObject({ stream_seq: z.int(), subject: z.string(), reason: z.string(), sha256: z.string(), bytes: z.int() })),
    })
    .optional(),
});
export type ProjectionStatusView = z.output<typeof ProjectionStatusView>;

export interface ProjectionsStatusOptions {
  /** Skip the checksums (each reads every row of its view). */
  readonly checksums?: boolean;
  readonly json?: boolean;
}

/**
 * `writ projections status [--no-checksums] [--json]`: the checkpoint, how far
 * it is behind the log (events, and how long the oldest event not yet folded
 * has waited), each view's rows and checksum at that checkpoint, the last
 * rebuild, and the messages of the log passed over as junk (by reason, the
 * latest with where they are and the SHA-256 of their bytes). Read-only; what
 * is projected authorizes nothing.
 */
export async function projectionsStatus(options: ProjectionsStatusOptions, api: WritApi, io: CliIo): Promise<ProjectionStatusView> {
  const status = await api.get('/v1/projections/status', ProjectionStatusView, { checksums: options.checksums === false ? 'false' : 'true' });
  if (options.json === true) {
    io.stdout(JSON.stringify(status));
    return status;
  }
  io.stdout(`checkpoint ${status.checkpoint} of ${status.last_stream_seq}: ${status.events_behind} events behind${status.events_behind > 0 ? `, the oldest waiting ${status.lag_ms} ms` : ''}`);
  const order = new Map<string, number>(ProjectionView.options.map((view, index) => [view, index]));
  const views = [...status.views].sort((a, b) => (order.get(a.view) ?? 99) - (order.get(b.view) ?? 99));
  for (const line of table(['VIEW', 'ROWS', 'CHECKSUM'], views.map((v) => [cell(v.view), String(v.rows), cell(v.checksum)]))) io.stdout(line);
  const last = status.last_rebuild;
  io.stdout(
    last === null
      ? 'last rebuild: none'
      : `last rebuild: ${cell(last.job_id)} ${cell(last.state)} (${last.views.length} views, started ${cell(last.started_at)}${last.swapped_at_seq === null ? '' : `, swapped in at stream seq ${last.swapped_at_seq}`})`,
  );
  const quarantined = status.quarantined;
  if (quarantined !== undefined) {
    const reasons = Object.entries(quarantined.by_reason).map(([reason, count]) => `${count} ${cell(reason)}`);
    io.stdout(`quarantined: ${quarantined.total} message(s) of the log passed over as not events${reasons.length === 0 ? '' : ` (${reasons.join(', ')})`}`);
    for (const record of quarantined.latest) {
      io.stdout(`  stream seq ${record.stream_seq}  ${cell(record.reason)}  ${cell(record.subject, 120)}  ${record.bytes} bytes  sha256 ${cell(record.sha256).slice(0, 16)}…`);
    }
  }
  return status;
}
