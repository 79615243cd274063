import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Logger } from '@writ/telemetry';
import { toHttpError } from './http-status.js';

interface JsonResponse {
  headersSent?: boolean;
  status(code: number): { json(body: unknown): void };
}

/** Every HTTP failure as `{ code, message }` with the status from the one table (`http-status.ts`). */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body } = toHttpError(exception);
    if (status === 500) this.logger.error({ err: exception, code: body.code }, 'HTTP request failed');
    else if (status > 500) this.logger.warn({ code: body.code, message: body.message }, 'HTTP request failed upstream');
    const response = host.switchToHttp().getResponse<JsonResponse>();
    if (response.headersSent === true) return;
    response.status(status).json(body);
  }
}
