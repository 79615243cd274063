import { describe, expect, it } from 'vitest';
import { offlineCli } from '../../test/offline-cli.fixture.js';

// The checks `writ working-state set` and `writ belief assert|revoke|list` make before anything is signed or sent:
// NATS points at a closed port, so a command that got past them would fail CLI_NATS_UNREACHABLE instead.
const { writ, file } = offlineCli('writ-knowledge-');

const KEY = ['--key', 'key.json', '--principal', 'agent-1'];

describe('writ working-state and writ belief: refused before anything is sent', () => {
  it('given an entry of a kind outside Hermit 15.2, when set, then CONTRACT_INVALID names it (a transcript dump is not a working state entry)', async () => {
    const result = await writ(['working-state', 'set', 'task-1', await file('entries.json', [{ key: 'history.chat', kind: 'transcript', value: 'everything said so far' }]), ...KEY]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CONTRACT_INVALID: /);
    expect(result.stderr).toContain('kind');
  });

  it('given a belief without evidence_refs or with a confidence above 1, when asserted, then CONTRACT_INVALID names the field', async () => {
    const belief = { claim: 'the build is green', scope: 'repo:writ', confidence: 1.5, trust_tier: 'observed' };
    const result = await writ(['belief', 'assert', 'task-1', await file('belief.json', belief), ...KEY]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CONTRACT_INVALID: /);
    for (const field of ['confidence', 'evidence_refs']) expect(result.stderr).toContain(field);
  });

  it('given a bad task id, a revocation without a reason, or an unknown status, then each is refused by its check', async () => {
    expect((await writ(['working-state', 'set', 'task.1', ...KEY])).stderr).toMatch(/^error CONTRACT_INVALID: .*task id/);
    expect((await writ(['belief', 'revoke', 'task-1', 'bel-1', ...KEY])).stderr).toMatch(/^error CLI_USAGE: .*--reason/);
    expect((await writ(['belief', 'list', 'task-1', '--status', 'deleted'])).stderr).toMatch(/^error CONTRACT_INVALID: .*--status/);
  });
});
