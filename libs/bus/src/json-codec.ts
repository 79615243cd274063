import { BusError } from './bus-errors.js';

/**
 * Wire format of every bus payload: UTF-8 JSON. Handlers receive the parsed
 * value; validating it against a contract (zod) is the handler's job, and a
 * `ContractError` it throws is dead-lettered at once.
 */
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

export function decodeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch (cause) {
    throw new BusError('BUS_PAYLOAD_INVALID', `message body is not UTF-8 JSON (${data.byteLength} bytes)`, { cause });
  }
}

export function encodeJson(value: unknown): Uint8Array {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new BusError('BUS_PAYLOAD_INVALID', 'payload cannot be encoded as JSON', { cause });
  }
  if (text === undefined) throw new BusError('BUS_PAYLOAD_INVALID', `payload of type ${typeof value} has no JSON form`);
  return encoder.encode(text);
}
