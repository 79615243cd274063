import { DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { backoffDelay } from '@writ/bus';
import type { Logger } from '@writ/telemetry';
import { WakeableSleep } from '@writ/runtime';

/** What the handler wants after one message: the next one, or an end to following. */
export type FollowStep = 'next' | 'stop';

export interface OrderedFollowerOptions {
  readonly nc: NatsConnection;
  readonly stream: string;
  readonly filter: string;
  /** Stream sequence of the first message wanted (>= 1). */
  readonly fromSeq: number;
  /** Called for each message, awaited, in stream order. */
  readonly onMessage: (message: JsMsg) => Promise<FollowStep> | FollowStep;
  /** Names the follower in log lines. */
  readonly name: string;
  readonly logger: Logger;
}

/** After a consumer failure: 250 ms, doubling, at most 10 s. */
const RESTART_BACKOFF = { initialMs: 250, maxMs: 10_000, multiplier: 2 } as const;

/**
 * Hands every message of `filter` from `fromSeq` on to a handler, one at a
 * time in stream order, through an ordered (ephemeral, server-side stateless)
 * consumer; the position lives in this process and in what the handler
 * appends, never on the server. Should the consumer fail, it is recreated
 * after the last message handled, with backoff. `stop` ends the loop and
 * waits for the message in hand.
 */
export class OrderedFollower {
  #stopping = false;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  readonly #pause = new WakeableSleep();
  #next: number;
  #running = false;

  constructor(private readonly options: OrderedFollowerOptions) {
    this.#next = Math.max(1, options.fromSeq);
  }

  /** Following (a consumer is open and the loop runs). */
  get running(): boolean {
    return this.#running && !this.#stopping;
  }

  /** Stream sequence of the next message wanted. */
  get position(): number {
    return this.#next;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#pause.wake();
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { nc, stream, filter, logger, name } = this.options;
    for (let failures = 0; !this.#stopping; ) {
      try {
        const consumer = await jetstream(nc).consumers.get(stream, { filter_subjects: filter, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.#next });
        const messages = await consumer.consume();
        this.#messages = messages;
        this.#running = true;
        if (this.#stopping) break;
        for await (const message of messages) {
          const step = await this.options.onMessage(message);
          if (step === 'stop') {
            this.#stopping = true;
            break;
          }
          this.#next = message.seq + 1;
          failures = 0;
          if (this.#stopping) break;
        }
      } catch (error) {
        if (!this.#stopping) logger.warn({ err: error, follower: name, from_seq: this.#next }, 'ordered follower failed; it restarts after the last message handled');
      } finally {
        this.#running = false;
        await this.#messages?.close().catch(() => undefined);
        this.#messages = undefined;
      }
      if (this.#stopping) break;
      failures += 1;
      await this.#pause.sleep(backoffDelay(failures, RESTART_BACKOFF));
    }
  }
}
