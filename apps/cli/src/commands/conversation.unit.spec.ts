import { describe, expect, it } from 'vitest';
import { offlineCli } from '../../test/offline-cli.fixture.js';

// The checks `writ say`, `writ focus` and `writ history` make before anything is signed or sent:
// NATS and the API point at closed ports, so a command that got past them would fail to connect instead.
const { writ } = offlineCli('writ-conversation-');

const KEY = ['--key', 'key.json', '--principal', 'agent-1'];

describe('writ say, focus and history: refused before anything is sent', () => {
  it('given a message without a conversation, of an unknown kind, naming a bad task id, or empty, then each is refused by its check with exit 1', async () => {
    expect((await writ(['say', 'hello', ...KEY])).stderr).toMatch(/^error CLI_USAGE: .*--conversation/);
    expect((await writ(['say', 'hello', '--conversation', 'c-1', '--kind', 'order', ...KEY])).stderr).toMatch(/^error CONTRACT_INVALID: .*--kind/);
    expect((await writ(['say', 'hello', '--conversation', 'c-1', '--task', 'task.1', ...KEY])).stderr).toMatch(/^error CONTRACT_INVALID: .*--task/);
    const empty = await writ(['say', '', '--conversation', 'c-1', ...KEY]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^error CONTRACT_INVALID: .*text/);
  });

  it('given a bad principal or conversation id, then focus and history refuse it', async () => {
    expect((await writ(['focus', '--of', 'a b'])).stderr).toMatch(/^error CONTRACT_INVALID: .*--of/);
    expect((await writ(['history', 'conv/1'])).stderr).toMatch(/^error CONTRACT_INVALID: .*conversation id/);
  });
});
