import type { ServerResponse } from 'node:http';
import { Controller, Get, Headers, Inject, Query, Res } from '@nestjs/common';
import type { HttpReadScope } from '@writ/contracts';
import { CHANGES_DEFAULT_LIMIT, type ChangesPage } from '@writ/contracts/projection-rows';
import type { HttpCaller } from '@writ/runtime';
import { Caller } from '@writ/runtime/nest';
import { ChangeStreams, type StreamSink } from '../../application/change-stream.js';
import { ChangesService, feedQuery } from '../../application/changes.js';
import { ProjectionError } from '../../application/projection-errors.js';
import { ReadScope } from './read-scope.js';

/** How long an ended response may take to flush before its socket is destroyed (a client that stopped reading). */
const END_GRACE_MS = 5_000;

/** The HTTP response as a stream's sink: write, wait for drain (or the client leaving), end. */
export function responseSink(res: ServerResponse): StreamSink {
  return {
    write: (chunk) => res.write(chunk),
    drained: (timeoutMs) =>
      new Promise<boolean>((resolve) => {
        if (!res.writableNeedDrain) return resolve(true);
        const settle = (drained: boolean) => () => {
          clearTimeout(timer);
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(drained);
        };
        const onDrain = settle(true);
        const onClose = settle(false);
        const timer = setTimeout(onClose, timeoutMs);
        res.once('drain', onDrain);
        res.once('close', onClose);
      }),
    end: () => {
      res.end();
      setTimeout(() => res.destroy(), END_GRACE_MS).unref();
    },
  };
}

/**
 * The changes feed for dashboards (docs/dashboard-contract.md): a page of
 * rows changed after a version, and the same as Server-Sent Events that
 * follow the projector. Read-only, scoped like every read (`ReadScope`).
 */
@Controller('v1/changes')
export class ChangesController {
  constructor(
    @Inject(ChangesService) private readonly changes: ChangesService,
    @Inject(ChangeStreams) private readonly streams: ChangeStreams,
  ) {}

  /** `?since=<version>&views=a,b&limit=N`: rows with `row_version > since`, in version order, `next` to pass as `since` next time. */
  @Get()
  page(@Query('since') since: unknown, @Query('views') views: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<ChangesPage> {
    return this.changes.page(this.changes.request({ since, views, limit }), scope);
  }

  /**
   * `?since=<version>&views=a,b` (or `Last-Event-ID`): Server-Sent Events,
   * the replay then the live changes, until the client leaves, its token
   * expires, it cannot keep up, or the instance stops (`closing` says which).
   */
  @Get('stream')
  async stream(
    @Query('since') since: unknown,
    @Query('views') views: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @ReadScope() scope: HttpReadScope,
    @Caller() caller: HttpCaller | undefined,
    @Res() res: ServerResponse,
  ): Promise<void> {
    if (caller === undefined) throw new ProjectionError('PROJECTION_INTERNAL', 'the change stream ran without a verified caller');
    const request = this.changes.request({ since, views }, lastEventId);
    const stream = this.streams.open(feedQuery({ ...request, limit: CHANGES_DEFAULT_LIMIT }, scope), responseSink(res), caller.expiresAt.getTime());
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Connection', 'keep-alive');
    // Proxies that buffer (nginx) would hold the events back.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    res.on('close', () => stream.abandon());
    await this.streams.serve(stream);
  }
}
