import type { ActionRequest, ParticipantActionDenialCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { manifest, participantRequest } from '../../test/lineage-flow.js';
import { checkParticipantAction, participantScope } from './participant-scope.js';

// The manifest of test/lineage-flow: fs read docs/**, write out/**; net api.example.com; shell ls, cat;
// providers anthropic; 20 calls, 10 000 tokens, 3 600 s of wall clock from T0; expires T0 + 1 h.
const scope = participantScope(manifest());

type Case = { note: string; request: Pick<ActionRequest, 'action_class' | 'target_resources' | 'params'>; want: 'allow' | ParticipantActionDenialCode };

const cases: Case[] = [
  { note: 'read inside read:docs/**', request: { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' } }, want: 'allow' },
  { note: 'read inside write:out/** (write implies read)', request: { action_class: 'read_local', target_resources: ['out/x'], params: { path: 'out/x' } }, want: 'allow' },
  { note: 'read outside every glob', request: { action_class: 'read_local', target_resources: ['src/a.ts'], params: { path: 'src/a.ts' } }, want: 'PARTICIPANT_PATH_DENIED' },
  { note: 'read escaping the cell home', request: { action_class: 'read_local', target_resources: ['docs/../../etc/passwd'], params: { path: 'docs/../../etc/passwd' } }, want: 'PARTICIPANT_PATH_DENIED' },
  { note: 'write under write:out/**', request: { action_class: 'write_local', target_resources: ['out/index.json'], params: { path: 'out/index.json', content: '{}' } }, want: 'allow' },
  { note: 'write where only reading is granted', request: { action_class: 'write_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md', content: 'x' } }, want: 'PARTICIPANT_PATH_DENIED' },
  { note: 'delete under write:out/**', request: { action_class: 'delete_local', target_resources: ['out/old.json'], params: { path: 'out/old.json' } }, want: 'allow' },
  { note: 'a listed program reading docs', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['ls', 'docs'], cwd: 'docs' } }, want: 'allow' },
  { note: 'a program not listed', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['rm', '-rf', 'docs'] } }, want: 'PARTICIPANT_COMMAND_DENIED' },
  { note: 'a listed program behind a shell wrapper', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['sh', '-c', 'ls docs'] } }, want: 'PARTICIPANT_COMMAND_DENIED' },
  { note: 'a listed program spelled with a path', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['/tmp/ls'] } }, want: 'PARTICIPANT_COMMAND_DENIED' },
  { note: 'a listed program whose ">" is only an argument (argv runs without a shell)', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['cat', 'docs/a.md', '>', 'docs/b.md'] } }, want: 'allow' },
  { note: 'a GET on a listed host', request: { action_class: 'network_read', target_resources: ['https://api.example.com/v1/x'], params: { url: 'https://api.example.com/v1/x', method: 'GET' } }, want: 'allow' },
  { note: 'a GET on another host', request: { action_class: 'network_read', target_resources: ['https://evil.example.net/'], params: { url: 'https://evil.example.net/', method: 'GET' } }, want: 'PARTICIPANT_HOST_DENIED' },
  { note: 'a host that only looks like a listed one', request: { action_class: 'network_read', target_resources: ['https://api.example.com@evil.example.net/'], params: { url: 'https://api.example.com@evil.example.net/', method: 'GET' } }, want: 'PARTICIPANT_HOST_DENIED' },
  { note: 'a listed provider', request: { action_class: 'credentialed_api_call', target_resources: ['https://api.example.com/v1/messages'], params: { url: 'https://api.example.com/v1/messages', provider: 'anthropic' } }, want: 'allow' },
  { note: 'a provider not listed', request: { action_class: 'credentialed_api_call', target_resources: ['https://api.example.com/v1/messages'], params: { url: 'https://api.example.com/v1/messages', provider: 'openai' } }, want: 'PARTICIPANT_PROVIDER_DENIED' },
  { note: 'a provider call naming no provider', request: { action_class: 'credentialed_api_call', target_resources: ['https://api.example.com/v1/messages'], params: { url: 'https://api.example.com/v1/messages' } }, want: 'PARTICIPANT_PROVIDER_DENIED' },
  { note: 'a payment', request: { action_class: 'payment', target_resources: ['https://api.example.com/pay'], params: { url: 'https://api.example.com/pay' } }, want: 'PARTICIPANT_ACTION_CLASS_DENIED' },
  { note: 'a memory write', request: { action_class: 'memory_write', target_resources: ['memory:notes'], params: {} }, want: 'PARTICIPANT_ACTION_CLASS_DENIED' },
  { note: 'a command asking for more wall clock than is left', request: { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['ls'], timeout_ms: 3_600_000 } }, want: 'PARTICIPANT_LIMIT_EXCEEDED' },
];

describe('checkParticipantAction (default deny outside the manifest)', () => {
  it.each(cases)('given $note, then $want', ({ request, want }) => {
    const check = checkParticipantAction(scope, participantRequest(request), { status: 'active', now: at(10), usage: { calls: 0, tokens: 0 } });
    expect(check.ok ? 'allow' : check.code).toBe(want);
  });

  const read = participantRequest({ action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' } });

  it('given a listed program that writes, then its write targets must be under write: globs', () => {
    const copier = participantScope(manifest({ capabilities: { fs: ['read:docs/**', 'write:out/**'], net: [], shell: ['cp'], providers: [] } }));
    const cp = (to: string) => participantRequest({ action_class: 'execute_command', target_resources: ['docs/a.md', to], params: { argv: ['cp', 'docs/a.md', to] } });
    expect(checkParticipantAction(copier, cp('out/a.md'), { status: 'active', now: at(10) })).toEqual({ ok: true });
    expect(checkParticipantAction(copier, cp('docs/b.md'), { status: 'active', now: at(10) })).toMatchObject({ ok: false, code: 'PARTICIPANT_PATH_DENIED' });
  });

  it.each(['paused', 'retired', 'expired', 'failed'] as const)('given a %s participant, then every action is PARTICIPANT_NOT_ACTIVE', (status) => {
    expect(checkParticipantAction(scope, read, { status, now: at(10) })).toMatchObject({ ok: false, code: 'PARTICIPANT_NOT_ACTIVE' });
  });

  it('given an active participant past its TTL, then PARTICIPANT_NOT_ACTIVE', () => {
    expect(checkParticipantAction(scope, read, { status: 'active', now: at(3_600) })).toMatchObject({ ok: false, code: 'PARTICIPANT_NOT_ACTIVE' });
  });

  it('given the calls or tokens used up, then PARTICIPANT_LIMIT_EXCEEDED; one call left, allowed', () => {
    expect(checkParticipantAction(scope, read, { status: 'active', now: at(10), usage: { calls: 20, tokens: 0 } })).toMatchObject({ code: 'PARTICIPANT_LIMIT_EXCEEDED' });
    expect(checkParticipantAction(scope, read, { status: 'active', now: at(10), usage: { calls: 0, tokens: 10_001 } })).toMatchObject({ code: 'PARTICIPANT_LIMIT_EXCEEDED' });
    expect(checkParticipantAction(scope, read, { status: 'active', now: at(10), usage: { calls: 19, tokens: 10_000 } })).toEqual({ ok: true });
  });

  it('given a new manifest with other capabilities, then the scope follows the manifest (capabilities change only with a new manifest)', () => {
    const wider = participantScope(manifest({ capabilities: { fs: ['read:**'], net: [], shell: [], providers: [] } }));
    const src = participantRequest({ action_class: 'read_local', target_resources: ['src/a.ts'], params: { path: 'src/a.ts' } });
    expect(checkParticipantAction(scope, src, { status: 'active', now: at(10) }).ok).toBe(false);
    expect(checkParticipantAction(wider, src, { status: 'active', now: at(10) }).ok).toBe(true);
  });
});
