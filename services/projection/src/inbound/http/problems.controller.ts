import { Controller, Get, Param } from '@nestjs/common';
import { WritErrorCode, problemTitle, problemType, type ProblemType } from '@writ/contracts';
import { PublicRoute } from '@writ/runtime/nest';
import { ProjectionError } from '../../application/projection-errors.js';
import { statusForCode } from './http-status.js';

/**
 * `GET /v1/problems/<code>`: what the `type` of a problem details body points
 * at (RFC 9457: a type URI should lead to its documentation): the code, its
 * title and the status the API answers it with, from the one table.
 */
@PublicRoute()
@Controller('v1/problems')
export class ProblemsController {
  @Get(':code')
  problem(@Param('code') code: string): ProblemType {
    if (!WritErrorCode.safeParse(code).success) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'a problem type is a Writ error code such as PROJECTION_NOT_FOUND', { details: { parameter: 'code' } });
    }
    return { type: problemType(code), code, title: problemTitle(code), status: statusForCode(code) };
  }
}
