import { describe, expect, it } from 'vitest';
import { WakeableSleep } from './wakeable-sleep.js';

describe('WakeableSleep', () => {
  it('given a long sleep, when woken, then it ends at once', async () => {
    const pause = new WakeableSleep();
    let ended = false;
    const sleeping = pause.sleep(60_000).then(() => (ended = true));
    pause.wake();
    await sleeping;
    expect(ended).toBe(true);
  });

  it('given no sleep in progress, when woken, then nothing happens and the next sleep still waits its time', async () => {
    const pause = new WakeableSleep();
    pause.wake();
    let ended = false;
    const sleeping = pause.sleep(20).then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(false);
    await sleeping;
    expect(ended).toBe(true);
  });
});
