import { describe, expect, it } from 'vitest';
import { connectTestNats, uniqueName } from './real-nats.js';

describe('connectTestNats', () => {
  it('reaches the real JetStream-enabled server', async () => {
    // given the machine's NATS server, when we connect
    const nc = await connectTestNats();
    // then it is a live server, not a stand-in
    expect(nc.info?.jetstream).toBe(true);
    await nc.close();
  });

  it('hands out names that are distinct and usable as subject tokens', () => {
    const names = new Set(Array.from({ length: 100 }, () => uniqueName('t')));
    expect(names.size).toBe(100);
    for (const name of names) expect(name).toMatch(/^t_[0-9a-f]{12}$/);
  });
});
