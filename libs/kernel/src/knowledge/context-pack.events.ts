import { ContextPackCompiled, ContextPackRefused } from '@writ/contracts';
import { z } from 'zod';

/**
 * The events of an attempt's context pack (Hermit 15.6) on its task's stream: compiled once
 * (stored content-addressed, the event says where), or refused with the kernel's code when
 * its inputs cannot make a pack. Either is final: a pack is never recompiled into another.
 */
export const ContextPackEvent = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('context.pack_compiled'), data: ContextPackCompiled }),
  z.strictObject({ type: z.literal('context.pack_refused'), data: ContextPackRefused }),
]);
export type ContextPackEvent = z.infer<typeof ContextPackEvent>;
export type ContextPackEventType = ContextPackEvent['type'];
