import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/**
 * Hands the handler's own error to the transport, unchanged.
 *
 * Nest's default RPC filter replaces every error that is not an `RpcException`
 * with `{ status: 'error', message: 'Internal server error' }`, which throws
 * away the Writ error code the ack policy branches on (a `ContractError` would
 * be retried instead of dead-lettered). Register this filter on the
 * microservice: `app.useGlobalFilters(new BusExceptionFilter())`. Without it,
 * every failure is `BUS_HANDLER_FAILED`: retried with backoff, then dead-lettered.
 */
@Catch()
export class BusExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}
