import type { LoggerService } from '@nestjs/common';
import type { Logger } from '@writ/telemetry';

/** Nest's own log lines through the service's pino logger (so they are redacted and trace-correlated like the rest). */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...context: unknown[]): void {
    this.logger.info({ context: context.at(-1) }, String(message));
  }

  error(message: unknown, ...context: unknown[]): void {
    this.logger.error({ context: context.at(-1) }, String(message));
  }

  warn(message: unknown, ...context: unknown[]): void {
    this.logger.warn({ context: context.at(-1) }, String(message));
  }

  debug(message: unknown, ...context: unknown[]): void {
    this.logger.debug({ context: context.at(-1) }, String(message));
  }

  verbose(message: unknown, ...context: unknown[]): void {
    this.logger.trace({ context: context.at(-1) }, String(message));
  }

  fatal(message: unknown, ...context: unknown[]): void {
    this.logger.fatal({ context: context.at(-1) }, String(message));
  }
}
