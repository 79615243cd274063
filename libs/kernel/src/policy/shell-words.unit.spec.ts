import { describe, expect, it } from 'vitest';
import { splitShell } from './shell-words.js';

const words = (script: string) => splitShell(script).commands.map((c) => c.words);

describe('splitShell', () => {
  it.each<[string, string[][]]>([
    ['rm -rf /', [['rm', '-rf', '/']]],
    ["rm '-rf' \"/\"", [['rm', '-rf', '/']]],
    ['r"m" -r\\f /', [['rm', '-rf', '/']]],
    ["$'\\x72\\155' -rf /", [['rm', '-rf', '/']]],
    ['a; b && c || d & e', [['a'], ['b'], ['c'], ['d'], ['e']]],
    ['a | b |& c', [['a'], ['b'], ['c']]],
    ['echo "a b" \'c d\'', [['echo', 'a b', 'c d']]],
    ['echo a\\\nb', [['echo', 'ab']]],
    ['# just a comment\necho x # trailing', [['echo', 'x']]],
    ['echo "#not a comment"', [['echo', '#not a comment']]],
    ['if true; then rm -rf /; fi', [['if', 'true'], ['then', 'rm', '-rf', '/'], ['fi']]],
    ['(cd /; rm -rf *)', [['cd', '/'], ['rm', '-rf', '*']]],
  ])('given %j, then the words are %j', (script, want) => {
    expect(words(script)).toEqual(want);
  });

  it('given pipes, then piped commands share a pipeline and others do not', () => {
    const parsed = splitShell('a | b; c');
    expect(parsed.commands.map((c) => c.pipeline)).toEqual([0, 0, 1]);
  });

  it('given redirections, then targets are lifted out of the words and fd numbers dropped', () => {
    const [command] = splitShell('echo hi > out.txt 2>&1 >>log').commands;
    expect(command?.words).toEqual(['echo', 'hi']);
    expect(command?.redirects).toEqual([
      { op: '>', target: 'out.txt' },
      { op: '>&', target: '1' },
      { op: '>>', target: 'log' },
    ]);
  });

  it('given a here-document, then its body is the stdin of its command', () => {
    const parsed = splitShell("psql <<'SQL'\nDROP TABLE users;\nSQL\necho done");
    expect(parsed.commands.map((c) => [c.words, c.stdin])).toEqual([
      [['psql'], 'DROP TABLE users;'],
      [['echo', 'done'], null],
    ]);
  });

  it('given a here-string, then it is stdin', () => {
    expect(splitShell('sh <<< "rm -rf /"').commands[0]?.stdin).toBe('rm -rf /');
  });

  it('given command and process substitutions, then their bodies are lifted out and the word is dynamic', () => {
    const parsed = splitShell('echo $(rm -rf /) `shred x` "$(kill -9 1)" <(mkfs /dev/sda)');
    expect(parsed.substitutions).toEqual(['rm -rf /', 'shred x', 'kill -9 1', 'mkfs /dev/sda']);
    expect(parsed.commands[0]?.dynamic).toEqual([false, true, true, true, true]);
  });

  it('given expansions, then the word is flagged dynamic', () => {
    expect(splitShell('$CMD -rf "$DIR"').commands[0]?.dynamic).toEqual([true, false, true]);
    expect(splitShell("'$CMD'").commands[0]?.dynamic).toEqual([false]);
  });

  it.each(['echo "open', "echo 'open", 'echo $(open', 'echo `open', 'cat >', "$'open"])('given %j, then it reports ok: false and never guesses', (script) => {
    const parsed = splitShell(script);
    expect(parsed.ok).toBe(false);
    expect(parsed.error).not.toBeNull();
  });
});
