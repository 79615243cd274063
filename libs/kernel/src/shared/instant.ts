import { Timestamp } from '@writ/contracts';
import { KernelError, type KernelCommandErrorCode } from './kernel-error.js';

/**
 * Milliseconds since the epoch of an RFC 3339 instant with an explicit
 * offset, or undefined when `value` is not one.
 */
export function tryInstantMs(value: unknown): number | undefined {
  if (!Timestamp.safeParse(value).success) return undefined;
  const ms = Date.parse(value as string);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Like `tryInstantMs`, throwing KERNEL_COMMAND_INVALID naming `what`. */
export function instantMs(value: unknown, what: string): number {
  const ms = tryInstantMs(value);
  if (ms === undefined) {
    throw new KernelError<KernelCommandErrorCode>('KERNEL_COMMAND_INVALID', `${what} must be an RFC 3339 instant with an offset`, {
      details: { field: what },
    });
  }
  return ms;
}

/** The command's `metadata.now`, in milliseconds. */
export function commandNowMs(command: { readonly metadata?: { readonly now?: unknown } }): number {
  return instantMs(command.metadata?.now, 'metadata.now');
}

/** Throws KERNEL_COMMAND_INVALID for a command type the decider does not know. */
export function unknownCommand(type: unknown, context: string): never {
  throw new KernelError<KernelCommandErrorCode>('KERNEL_COMMAND_INVALID', `${context} does not know the command ${JSON.stringify(type)}`, {
    details: { type: typeof type === 'string' ? type : null },
  });
}
