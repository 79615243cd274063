import { Body, Controller, Get, HttpStatus, Inject, Param, Post, Res } from '@nestjs/common';
import { Id, hasErrorCode, type CheckParticipantActionReply, type SeedVerdict } from '@writ/contracts';
import { participantView } from '../application/participant-view.js';
import { SeedVerificationHandler } from '../application/seed-verification.handler.js';
import { withConflictRetries } from './seed-retries.js';
import { httpReadScope } from '@writ/kernel';
import type { HttpCaller } from '@writ/runtime';
import { Caller, PublicRoute } from '@writ/runtime/nest';

interface StatusResponse {
  status(code: number): unknown;
}

type ErrorBody = { code: string; message: string };

const STATUS: Readonly<Record<SeedVerdict['outcome'], number>> = {
  accepted: HttpStatus.OK,
  duplicate: HttpStatus.OK,
  refused: HttpStatus.UNPROCESSABLE_ENTITY,
};

/**
 * Seed 002's endpoints, served by ingress (docs/spawn-retire.md):
 * `POST /v1/seeds/spawn/verify` (`VerifySpawn`), `/v1/seeds/heartbeat/verify`
 * (`VerifyHeartbeat`), `/v1/seeds/retire/ingest` (`IngestRetire`),
 * `/v1/seeds/crash/report` (`ReportCrash`) → `SeedVerdict`: 200 accepted or
 * duplicate, 422 refused (its `code`), 400 `CONTRACT_INVALID`, 413 a document
 * over 256 KiB, 503 infrastructure. `POST /v1/seeds/action/check` → whether the
 * participant's scope allows an action; `GET /v1/seeds/<seed_id>` → the
 * participant as the log says (404 when never recorded).
 */
@Controller('v1/seeds')
export class SeedsController {
  constructor(@Inject(SeedVerificationHandler) private readonly handler: SeedVerificationHandler) {}

  @PublicRoute()
  @Post('spawn/verify')
  spawn(@Body() body: unknown, @Res({ passthrough: true }) res: StatusResponse): Promise<SeedVerdict | ErrorBody> {
    return verdict(res, () => this.handler.verifySpawn(body));
  }

  @PublicRoute()
  @Post('heartbeat/verify')
  heartbeat(@Body() body: unknown, @Res({ passthrough: true }) res: StatusResponse): Promise<SeedVerdict | ErrorBody> {
    return verdict(res, () => this.handler.verifyHeartbeat(body));
  }

  @PublicRoute()
  @Post('retire/ingest')
  retire(@Body() body: unknown, @Res({ passthrough: true }) res: StatusResponse): Promise<SeedVerdict | ErrorBody> {
    return verdict(res, () => this.handler.ingestRetire(body));
  }

  @PublicRoute()
  @Post('crash/report')
  crash(@Body() body: unknown, @Res({ passthrough: true }) res: StatusResponse): Promise<SeedVerdict | ErrorBody> {
    return verdict(res, () => this.handler.reportCrash(body));
  }

  @PublicRoute()
  @Post('action/check')
  async check(@Body() body: unknown, @Res({ passthrough: true }) res: StatusResponse): Promise<CheckParticipantActionReply | ErrorBody> {
    try {
      const reply = await this.handler.checkAction(body);
      res.status(HttpStatus.OK);
      return reply;
    } catch (error) {
      return failure(res, error);
    }
  }

  @Get(':seedId')
  async show(@Param('seedId') seedId: string, @Res({ passthrough: true }) res: StatusResponse, @Caller() caller?: HttpCaller): Promise<Record<string, unknown> | ErrorBody> {
    if (!Id.safeParse(seedId).success) {
      res.status(HttpStatus.BAD_REQUEST);
      return { code: 'CONTRACT_INVALID', message: 'seed_id must be an Id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")' };
    }
    try {
      const state = await this.handler.state(seedId);
      // A participant is read by directors, operators and observers; to anyone else it answers as an unknown seed.
      const wide = caller !== undefined && httpReadScope(caller.principal).kind === 'all';
      if ((state.status === 'none' && state.seed_id === null) || !wide) {
        res.status(HttpStatus.NOT_FOUND);
        return { code: 'INGRESS_PARTICIPANT_UNKNOWN', message: `nothing was recorded for seed ${seedId}` };
      }
      res.status(HttpStatus.OK);
      return participantView(state);
    } catch (error) {
      return failure(res, error);
    }
  }
}

async function verdict(res: StatusResponse, run: () => Promise<SeedVerdict>): Promise<SeedVerdict | ErrorBody> {
  try {
    const reply = await withConflictRetries(run);
    res.status(STATUS[reply.outcome]);
    return reply;
  } catch (error) {
    return failure(res, error);
  }
}

function failure(res: StatusResponse, error: unknown): ErrorBody {
  const code = hasErrorCode(error) ? error.code : 'INGRESS_UNAVAILABLE';
  if (code === 'CONTRACT_INVALID' || code === 'INGRESS_SEED_DOCUMENT_TOO_LARGE') {
    res.status(code === 'CONTRACT_INVALID' ? HttpStatus.BAD_REQUEST : HttpStatus.PAYLOAD_TOO_LARGE);
    return { code, message: error instanceof Error ? error.message : code };
  }
  res.status(HttpStatus.SERVICE_UNAVAILABLE);
  return { code, message: 'ingress could not record the seed document; retry with the same document' };
}
