import fc from 'fast-check';

/** Quotes a word for a POSIX shell in one of several equivalent spellings. */
export function shellSpell(word: string, style: number): string {
  switch (style % 5) {
    case 0:
      return /^[A-Za-z0-9_./=:+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
    case 1:
      return `'${word.replace(/'/g, `'\\''`)}'`;
    case 2:
      return `"${word.replace(/(["\\$`])/g, '\\$1')}"`;
    case 3:
      return [...word].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `\\${c}`)).join('');
    default:
      return `$'${[...word].map((c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}'`;
  }
}

const rmProgram = fc.constantFrom('rm', '/bin/rm', '/usr/bin/rm', './rm');
const rmFlags = fc.constantFrom(['-rf'], ['-fr'], ['-r', '-f'], ['-f', '-r'], ['-R'], ['-Rf'], ['--recursive'], ['--recursive', '--force'], ['-r'], ['-vrf'], ['--rec']);
const rmTarget = fc.constantFrom('/', 'src/build', '.', '~', '/var/lib/app', '*', '$HOME', 'src');

/** Destructive invocations as argv (no wrapper). */
export const destructiveCore: fc.Arbitrary<string[]> = fc.oneof<fc.Arbitrary<string[]>[]>(
  fc.tuple(rmProgram, rmFlags, rmTarget).map(([p, f, t]) => [p, ...f, t]),
  fc
    .tuple(fc.constantFrom<string[]>([], ['-c', 'x=y'], ['-C', 'repo'], ['--no-pager']), fc.constantFrom<string[]>(['--force'], ['-f'], ['--force-with-lease'], ['-fu'], ['origin', '+main'], ['origin', ':old'], ['--delete', 'origin', 'x']))
    .map(([g, f]) => ['git', ...g, 'push', ...f]),
  fc.constantFrom<string[]>(
    ['git', 'reset', '--hard'],
    ['git', 'reset', '--hard', 'origin/main'],
    ['git', 'branch', '-D', 'feature'],
    ['git', 'branch', '--delete', '--force', 'feature'],
    ['git', 'clean', '-fd'],
    ['git', 'clean', '-f', '-x', '-d'],
    ['mkfs.ext4', '/dev/sdb1'],
    ['dd', 'if=/dev/zero', 'of=/dev/sda'],
    ['kill', '-9', '1'],
    ['kill', '-KILL', '4242'],
    ['pkill', '-f', 'node'],
    ['killall', 'python'],
    ['shred', '-u', 'src/secret'],
    ['find', 'src', '-delete'],
    ['kill', '4242'],
    ['kill', '-TERM', '-4242'],
    ['git', 'branch', '-d', 'feature'],
    ['git', 'tag', '--delete', 'v1'],
    ['auditctl', '-e', '0'],
    ['systemctl', 'stop', 'auditd.service'],
    ['journalctl', '--vacuum-time=1s'],
    ['crontab', '-r'],
  ),
  fc.tuple(fc.constantFrom('psql', 'mysql'), fc.constantFrom('DROP TABLE users', 'drop database prod', 'TRUNCATE users', 'DELETE FROM users', 'delete from users where true', 'UPDATE users SET admin = true', 'update users set a = 1 where 1 = 1')).map(([client, sql]) =>
    client === 'psql' ? ['psql', '-c', sql] : ['mysql', '-e', sql],
  ),
);

const wrapper = fc.constantFrom<string[]>([], ['sudo'], ['env'], ['/usr/bin/env'], ['env', '-i', 'A=1'], ['nice', '-n', '5'], ['timeout', '10'], ['nohup'], ['sudo', '-u', 'root', '--']);

/** Destructive argv in many disguises: wrappers, `sh -c` / `bash -lc` with any quoting, leading harmless commands. */
export const destructiveArgv: fc.Arbitrary<string[]> = fc.oneof(
  fc.tuple(wrapper, destructiveCore).map(([w, c]) => [...w, ...c]),
  fc
    .tuple(fc.constantFrom('sh', 'bash', '/bin/sh', 'dash', 'zsh'), fc.constantFrom('-c', '-lc', '-ec'), destructiveCore, fc.nat(), fc.constantFrom('', 'true && ', 'echo start; ', 'ls | '))
    .map(([shell, flag, core, style, lead]) => [shell, flag, `${lead}${core.map((word, i) => shellSpell(word, style + i)).join(' ')}`]),
);
