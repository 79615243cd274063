import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { PROBLEM_JSON } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { toProblem } from './http-status.js';

interface ProblemResponse {
  headersSent?: boolean;
  status(code: number): ProblemResponse;
  setHeader(name: string, value: string): void;
  send(body: string): void;
}

interface AnsweredRequest {
  originalUrl?: string;
  url?: string;
}

/**
 * Every HTTP failure as RFC 9457 problem details (`application/problem+json`)
 * with the status from the one table (`http-status.ts`) and Writ's stable
 * `code`. The instance is the request's path, never its query (a cursor, a
 * filter: nothing a log of the answer needs).
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<AnsweredRequest | undefined>();
    const path = (request?.originalUrl ?? request?.url)?.split('?')[0];
    const { status, problem } = toProblem(exception, path);
    if (status === 500) this.logger.error({ err: exception, code: problem.code }, 'HTTP request failed');
    else if (status > 500) this.logger.warn({ code: problem.code, message: problem.detail }, 'HTTP request failed upstream');
    const response = http.getResponse<ProblemResponse>();
    if (response.headersSent === true) return;
    response.status(status);
    response.setHeader('content-type', `${PROBLEM_JSON}; charset=utf-8`);
    response.send(JSON.stringify(problem));
  }
}
