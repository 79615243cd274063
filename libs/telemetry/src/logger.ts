import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions as PinoOptions } from 'pino';
import { isSecretKey, redactSecrets, redactString } from './redaction.js';
import { activeTraceIds } from './trace-context.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** Minimum level; defaults to `LOG_LEVEL` from the environment, else `info`. */
  readonly level?: Level | 'silent';
  /** Where lines go; defaults to stdout. Tests pass a stream that collects lines. */
  readonly destination?: DestinationStream;
  /** Fields on every line (e.g. `{ service: 'orchestrator' }`); redacted like everything else. */
  readonly base?: Record<string, unknown>;
}

/** A quoted JSON key that names a secret, e.g. `"api_key":` — only then is a whole line re-parsed. */
const JSON_KEY = /"([^"\\]{1,100})"\s*:/g;

function lineHasSecretKey(line: string): boolean {
  JSON_KEY.lastIndex = 0;
  for (let match = JSON_KEY.exec(line); match !== null; match = JSON_KEY.exec(line)) {
    if (isSecretKey(match[1] ?? '')) return true;
  }
  return false;
}

/**
 * The last net, on the serialized line: catches what never passed through the
 * object formatter (child-logger bindings, which pino serializes once at
 * `child()` time, and the message string). Value patterns always; a full
 * parse-redact-stringify only when the line holds a secret-named key.
 */
function redactLine(line: string): string {
  let out = redactString(line);
  if (lineHasSecretKey(out)) {
    try {
      out = `${JSON.stringify(redactSecrets(JSON.parse(out)))}\n`;
    } catch {
      // Not one JSON document (custom transport?): the value patterns above already ran.
    }
  }
  return out;
}

/**
 * A pino logger for component `name` whose lines never carry a secret value
 * (invariant 6), redacted by key name at any depth (password, secret, token,
 * authorization, private keys, JWK private members such as `d`, api keys...)
 * and by value shape (PEM private keys, bearer tokens, JWTs, URL credentials,
 * well-known API key formats). Each line carries `trace_id`/`span_id` of the
 * active span, so logs join traces.
 */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const level = options.level ?? (process.env['LOG_LEVEL'] as Level | undefined) ?? 'info';
  const loggerOptions: PinoOptions = {
      name,
      level,
      base: { ...(options.base === undefined ? {} : redactSecrets(options.base)) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The trace ids of the span the log call happens in.
      mixin: () => activeTraceIds() ?? {},
      formatters: {
        // Every logged object, errors included, is deep-copied with secrets removed before serialization.
        log: (object) => redactSecrets(object),
      },
      hooks: {
        // Message strings and printf arguments, before pino formats them.
        logMethod(args, method) {
          const redacted = args.map((arg) => (typeof arg === 'string' ? redactString(arg) : arg)) as typeof args;
          method.apply(this, redacted);
        },
        streamWrite: redactLine,
      },
  };
  return options.destination === undefined ? pino(loggerOptions) : pino(loggerOptions, options.destination);
}
