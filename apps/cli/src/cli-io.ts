/** Where a command reads its environment and writes its output: the process, or a test. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
  now(): Date;
}

export const processIo: CliIo = {
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  stderr: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  now: () => new Date(),
};

/** Where the log and the bus are: `--nats` or WRIT_NATS_URL, WRIT_SUBJECT_ROOT, WRIT_EVENTS_STREAM, WRIT_EVENTS_PREFIX. */
export interface Connection {
  readonly natsUrl: string;
  readonly subjectRoot: string;
  readonly eventsStream: string;
  readonly eventsPrefix: string;
  /** The environment the bus credential is read from (`WRIT_NATS_CREDS`, ...; `natsConnectOptions`). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function connectionFrom(io: CliIo, natsFlag?: string): Connection {
  const subjectRoot = io.env['WRIT_SUBJECT_ROOT'] || 'writ';
  return {
    natsUrl: natsFlag ?? (io.env['WRIT_NATS_URL'] || 'nats://127.0.0.1:4223'),
    subjectRoot,
    eventsStream: io.env['WRIT_EVENTS_STREAM'] || 'WRIT_EVENTS',
    eventsPrefix: io.env['WRIT_EVENTS_PREFIX'] || `${subjectRoot}.evt`,
    env: io.env,
  };
}
