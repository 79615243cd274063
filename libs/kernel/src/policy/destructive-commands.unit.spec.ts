import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeCommand, analyzeShellScript, isBroadTarget, isDestructiveCommand } from './destructive-commands.js';
import { destructiveSql } from './sql-statements.js';

const ids = (argv: readonly string[]) => [...new Set(analyzeCommand(argv).findings.map((f) => f.pattern_id))];

describe('destructive commands: the table of patterns', () => {
  it.each<[string, string[], string]>([
    ['rm -rf', ['rm', '-rf', 'build'], 'rm.recursive'],
    ['rm -fr', ['rm', '-fr', 'build'], 'rm.recursive'],
    ['rm -r -f', ['rm', '-r', '-f', 'build'], 'rm.recursive'],
    ['rm -R', ['rm', '-R', 'build'], 'rm.recursive'],
    ['rm --recursive --force', ['rm', '--recursive', '--force', 'build'], 'rm.recursive'],
    ['rm --recur (GNU abbreviation)', ['rm', '--recur', 'build'], 'rm.recursive'],
    ['rm -vrfi', ['rm', '-vrfi', 'build'], 'rm.recursive'],
    ['/bin/rm', ['/bin/rm', '-rf', 'build'], 'rm.recursive'],
    ['./rm', ['./rm', '-rf', 'build'], 'rm.recursive'],
    ['/usr/bin/env rm -r -f /', ['/usr/bin/env', 'rm', '-r', '-f', '/'], 'rm.recursive'],
    ['env -i A=1 rm', ['env', '-i', 'A=1', 'rm', '-rf', 'x'], 'rm.recursive'],
    ['env -S "rm -rf /"', ['env', '-S', 'rm -rf /'], 'rm.recursive'],
    ['sudo -u root rm', ['sudo', '-u', 'root', 'rm', '-rf', 'x'], 'rm.recursive'],
    ['nice -n 10 timeout 5 nohup rm', ['nice', '-n', '10', 'timeout', '5', 'nohup', 'rm', '-rf', 'x'], 'rm.recursive'],
    ['xargs rm -rf', ['xargs', '-0', 'rm', '-rf'], 'rm.recursive'],
    ['find -exec rm -rf', ['find', '.', '-name', 'x', '-exec', 'rm', '-rf', '{}', ';'], 'rm.recursive'],
    ['find -delete', ['find', '.', '-delete'], 'find.delete'],
    ['busybox rm', ['busybox', 'rm', '-rf', 'x'], 'rm.recursive'],
    ['ssh host rm -rf /', ['ssh', '-p', '22', 'host', 'rm', '-rf', '/'], 'rm.recursive'],
    ['git push --force', ['git', 'push', '--force'], 'git.push_force'],
    ['git push -f', ['git', 'push', '-f', 'origin', 'main'], 'git.push_force'],
    ['git push -uf', ['git', 'push', '-uf', 'origin', 'main'], 'git.push_force'],
    ['git push --force-with-lease', ['git', 'push', '--force-with-lease=main', 'origin'], 'git.push_force'],
    ['git push origin +main', ['git', 'push', 'origin', '+main'], 'git.push_force'],
    ['git -c x=y push --force', ['git', '-c', 'x=y', 'push', '--force'], 'git.push_force'],
    ['git -C dir --no-pager push -f', ['git', '-C', 'dir', '--no-pager', 'push', '-f'], 'git.push_force'],
    ['git alias to push --force', ['git', '-c', 'alias.ship=push --force', 'ship'], 'git.push_force'],
    ['git alias to a shell', ['git', '-c', 'alias.x=!rm -rf /', 'x'], 'rm.recursive'],
    ['git core.pager runs a shell', ['git', '-c', 'core.pager=rm -rf ~', 'log'], 'rm.recursive'],
    ['git push --delete', ['git', 'push', 'origin', '--delete', 'feature'], 'git.push_delete'],
    ['git push origin :feature', ['git', 'push', 'origin', ':feature'], 'git.push_delete'],
    ['git push --mirror', ['git', 'push', '--mirror'], 'git.push_delete'],
    ['git reset --hard', ['git', 'reset', '--hard', 'HEAD~3'], 'git.reset_hard'],
    ['git branch -D', ['git', 'branch', '-D', 'feature'], 'git.branch_force_delete'],
    ['git branch -d -f', ['git', 'branch', '-d', '-f', 'feature'], 'git.branch_force_delete'],
    ['git branch --delete --force', ['git', 'branch', '--delete', '--force', 'feature'], 'git.branch_force_delete'],
    ['git clean -fd', ['git', 'clean', '-fd'], 'git.clean_force'],
    ['git clean -d -x -f', ['git', 'clean', '-d', '-x', '-f'], 'git.clean_force'],
    ['git checkout -- file', ['git', 'checkout', '--', 'other_file'], 'git.checkout_discard'],
    ['git stash clear', ['git', 'stash', 'clear'], 'git.stash_drop'],
    ['git filter-branch', ['git', 'filter-branch', '--tree-filter', 'x'], 'git.history_rewrite'],
    ['psql -c DROP TABLE', ['psql', '-c', 'DROP TABLE users'], 'sql.drop'],
    ['psql --command=drop database', ['psql', '--command=drop database prod'], 'sql.drop'],
    ['psql -cDROP (attached)', ['psql', '-cDROP SCHEMA public CASCADE'], 'sql.drop'],
    ['mysql -e TRUNCATE', ['mysql', '-e', 'truncate table users'], 'sql.truncate'],
    ['sqlite3 db DELETE FROM', ['sqlite3', 'app.db', 'DELETE FROM users'], 'sql.delete_without_where'],
    ['DELETE with WHERE 1=1', ['psql', '-c', 'DELETE FROM users WHERE 1 = 1'], 'sql.delete_without_where'],
    ['SQL hidden behind a comment', ['psql', '-c', 'DrOp/**/TaBlE users'], 'sql.drop'],
    ['dropdb', ['dropdb', 'prod'], 'sql.drop_tool'],
    ['mkfs', ['mkfs', '-t', 'ext4', '/dev/sdb1'], 'disk.format'],
    ['mkfs.ext4', ['/sbin/mkfs.ext4', '/dev/sdb1'], 'disk.format'],
    ['wipefs', ['wipefs', '-a', '/dev/sdb'], 'disk.format'],
    ['dd of=/dev/sda', ['dd', 'if=/dev/zero', 'of=/dev/sda', 'bs=1M'], 'dd.device_write'],
    ['kill -9', ['kill', '-9', '1234'], 'kill.sigkill'],
    ['kill -KILL', ['kill', '-KILL', '1234'], 'kill.sigkill'],
    ['kill -s SIGKILL', ['kill', '-s', 'SIGKILL', '1234'], 'kill.sigkill'],
    ['pkill', ['pkill', 'node'], 'kill.by_name'],
    ['killall', ['killall', 'node'], 'kill.by_name'],
    ['shred', ['shred', '-u', 'secret.txt'], 'shred'],
    ['chmod -R 777 /', ['chmod', '-R', '777', '/'], 'permissions.recursive_broad'],
    ['shutdown', ['shutdown', '-h', 'now'], 'system.power'],
    ['redis FLUSHALL', ['redis-cli', 'FLUSHALL'], 'redis.flush'],
    // branch deletion, kill of processes the task did not spawn, disabling audit (seed 003)
    ['git branch -d', ['git', 'branch', '-d', 'merged'], 'git.branch_delete'],
    ['git branch --delete', ['git', 'branch', '--delete', 'merged'], 'git.branch_delete'],
    ['git tag -d', ['git', 'tag', '-d', 'v1.0.0'], 'git.tag_delete'],
    ['kill (TERM) of a pid', ['kill', '1234'], 'kill.process'],
    ['kill -TERM of a pid', ['kill', '-TERM', '1234'], 'kill.process'],
    ['kill -s HUP of a pid', ['kill', '-s', 'HUP', '1234'], 'kill.process'],
    ['kill of a variable', ['kill', '$PID'], 'kill.process'],
    ['kill -9 of a process group', ['kill', '-9', '-4242'], 'kill.sigkill'],
    ['kill -sKILL (attached)', ['kill', '-sKILL', '1234'], 'kill.sigkill'],
    ['kill -SIGKILL', ['kill', '-SIGKILL', '1234'], 'kill.sigkill'],
    ['pkill -f', ['pkill', '-f', 'node server.js'], 'kill.by_name'],
    ['fuser -k', ['fuser', '-k', '8080/tcp'], 'kill.by_name'],
    ['systemctl stop', ['systemctl', 'stop', 'nginx'], 'service.stop'],
    ['service stop', ['service', 'postgresql', 'stop'], 'service.stop'],
    ['auditctl -e 0', ['auditctl', '-e', '0'], 'audit.disable'],
    ['auditctl -e0 (attached)', ['auditctl', '-e0'], 'audit.disable'],
    ['auditctl -D', ['auditctl', '-D'], 'audit.disable'],
    ['auditctl never rule', ['auditctl', '-a', 'never,task'], 'audit.disable'],
    ['systemctl stop auditd', ['systemctl', 'stop', 'auditd'], 'audit.disable'],
    ['systemctl disable auditd.service', ['systemctl', '--now', 'disable', 'auditd.service'], 'audit.disable'],
    ['systemctl mask systemd-journald', ['systemctl', 'mask', 'systemd-journald'], 'audit.disable'],
    ['service auditd stop', ['service', 'auditd', 'stop'], 'audit.disable'],
    ['chkconfig auditd off', ['chkconfig', 'auditd', 'off'], 'audit.disable'],
    ['journalctl --vacuum-time', ['journalctl', '--vacuum-time=1s'], 'audit.disable'],
    ['env HISTFILE=/dev/null bash', ['env', 'HISTFILE=/dev/null', 'bash', '-c', 'true'], 'audit.disable'],
    ['crontab -r', ['crontab', '-r'], 'cron.remove_all'],
    ['psql UPDATE without WHERE', ['psql', '-c', 'UPDATE users SET admin = true'], 'sql.update_without_where'],
    ['UPDATE with WHERE only in a subquery', ['psql', '-c', 'UPDATE users SET plan = (SELECT id FROM plans WHERE name = $$free$$)'], 'sql.update_without_where'],
    ['UPDATE with an always-true WHERE', ['mysql', '-e', 'update users set admin=1 where 1=1'], 'sql.update_without_where'],
    ['ALTER TABLE DROP COLUMN', ['psql', '-c', 'ALTER TABLE users DROP COLUMN email'], 'sql.drop'],
    ['DELETE inside a CTE, WHERE only outside', ['psql', '-c', 'WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d WHERE true'], 'sql.delete_without_where'],
  ])('given %s, then %s matches', (_note, argv, id) => {
    expect(ids(argv)).toContain(id);
  });

  it.each<[string, string[], string]>([
    ['sh -c', ['sh', '-c', 'rm -rf build'], 'rm.recursive'],
    ['bash -lc', ['bash', '-lc', 'cd x && rm -r -f .'], 'rm.recursive'],
    ['bash -ec with quotes', ['bash', '-ec', 'rm "-rf" \'build\''], 'rm.recursive'],
    ['split quoting', ['sh', '-c', 'r""m -r""f build'], 'rm.recursive'],
    ["ANSI-C quoting $'\\x72m'", ['bash', '-c', "$'\\x72m' -rf /"], 'rm.recursive'],
    ['backslash', ['sh', '-c', '\\rm -rf build'], 'rm.recursive'],
    ['behind && and ;', ['sh', '-c', 'make && echo ok; git push -f'], 'git.push_force'],
    ['inside if/then', ['sh', '-c', 'if true; then rm -rf /; fi'], 'rm.recursive'],
    ['inside a function', ['bash', '-c', 'f() { rm -rf /; }; f'], 'rm.recursive'],
    ['in a command substitution', ['sh', '-c', 'echo $(rm -rf /)'], 'rm.recursive'],
    ['in backticks', ['sh', '-c', 'echo `git reset --hard`'], 'git.reset_hard'],
    ['nested sh -c', ['sh', '-c', "bash -c 'sh -c \"rm -rf /\"'"], 'rm.recursive'],
    ['psql inside sh -c', ['sh', '-c', 'psql -c "DROP TABLE users"'], 'sql.drop'],
    ['SQL piped into psql', ['sh', '-c', 'echo "DROP DATABASE prod" | psql'], 'sql.drop'],
    ['SQL in a here-document', ['bash', '-c', 'psql <<EOF\nDELETE FROM users;\nEOF'], 'sql.delete_without_where'],
    ['script piped into sh', ['sh', '-c', 'echo "rm -rf /" | sh'], 'rm.recursive'],
    ['eval', ['sh', '-c', 'eval "rm -rf /"'], 'rm.recursive'],
    ['redirect to a disk', ['sh', '-c', 'cat image > /dev/sda'], 'device.write'],
    ['history -c', ['bash', '-c', 'history -c'], 'audit.disable'],
    ['unset HISTFILE', ['bash', '-c', 'unset HISTFILE; make'], 'audit.disable'],
    ['set +o history', ['bash', '-c', 'set +o history'], 'audit.disable'],
    ['HISTFILE=/dev/null as a prefix', ['bash', '-c', 'HISTFILE=/dev/null make'], 'audit.disable'],
    ['export HISTSIZE=0', ['bash', '-c', 'export HISTSIZE=0'], 'audit.disable'],
    ['kill inside sh -c', ['sh', '-c', 'sleep 1; kill 1'], 'kill.process'],
    ['computed program name', ['sh', '-c', '$X -rf /'], 'shell.dynamic_command'],
    ['unsplittable string', ['sh', '-c', 'rm -rf "/'], 'shell.unparseable'],
    ['assignment prefix', ['sh', '-c', 'FOO=1 BAR=2 rm -rf x'], 'rm.recursive'],
  ])('given a shell string (%s), then %s matches', (_note, argv, id) => {
    expect(ids(argv)).toContain(id);
  });

  it.each<[string, string[]]>([
    ['npm test', ['npm', 'test']],
    ['rm of one file', ['rm', 'build/out.js']],
    ['rm -f of one file', ['rm', '-f', 'build/out.js']],
    ['grep -r (recursive, not rm)', ['grep', '-rf', 'patterns.txt', 'src']],
    ['cp -r', ['cp', '-r', 'a', 'b']],
    ['git status', ['git', 'status']],
    ['git push', ['git', 'push', 'origin', 'main']],
    ['git push -o with a value', ['git', 'push', '-o', 'ci.skip', 'origin', 'main']],
    ['git push --follow-tags', ['git', 'push', '--follow-tags']],
    ['git reset --soft', ['git', 'reset', '--soft', 'HEAD~1']],
    ['git branch (list)', ['git', 'branch', '--list']],
    ['git tag (create)', ['git', 'tag', 'v1.0.0']],
    ['git clean -n', ['git', 'clean', '-n', '-d']],
    ['git restore --staged', ['git', 'restore', '--staged', 'a.ts']],
    ['git -c user.name=x commit', ['git', '-c', 'user.name=x', 'commit', '-m', 'msg']],
    ['psql SELECT', ['psql', '-c', "SELECT 'DROP TABLE users'"]],
    ['psql DELETE with WHERE', ['psql', '-c', 'DELETE FROM users WHERE id = 42']],
    ['kill of its own background child ($!)', ['sh', '-c', 'sleep 100 & kill $!']],
    ['kill -9 of its own job (%1)', ['bash', '-c', 'sleep 100 & kill -9 %1']],
    ['kill -0 (existence probe)', ['kill', '-0', '1234']],
    ['kill -l (list signals)', ['kill', '-l']],
    ['systemctl status', ['systemctl', 'status', 'auditd']],
    ['systemctl restart', ['systemctl', 'restart', 'nginx']],
    ['journalctl -u', ['journalctl', '-u', 'nginx', '--since', 'today']],
    ['history (list)', ['bash', '-c', 'history 10']],
    ['HISTFILE to a file', ['bash', '-c', 'HISTFILE=~/.hist make']],
    ['crontab -l', ['crontab', '-l']],
    ['UPDATE with WHERE', ['psql', '-c', 'UPDATE users SET admin = false WHERE id = 7']],
    ['INSERT ... ON CONFLICT DO UPDATE SET', ['psql', '-c', 'INSERT INTO t (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET n = t.n + 1']],
    ['SELECT ... FOR UPDATE', ['psql', '-c', 'SELECT * FROM t WHERE id = 1 FOR UPDATE']],
    ['GRANT UPDATE', ['psql', '-c', 'GRANT UPDATE ON t TO app']],
    ['ALTER TABLE DROP CONSTRAINT', ['psql', '-c', 'ALTER TABLE t DROP CONSTRAINT t_pkey']],
    ['echo of a dangerous string', ['echo', 'rm -rf /']],
    ['sh -c echo of a dangerous string', ['sh', '-c', 'echo "rm -rf /"']],
    ['sh running a script file', ['sh', 'build.sh']],
    ['command -v rm', ['command', '-v', 'rm']],
    ['chmod -R on a build dir', ['chmod', '-R', 'u+w', 'build']],
    ['dd to a file', ['dd', 'if=/dev/zero', 'of=out.img', 'count=1']],
    ['redirect to /dev/null', ['sh', '-c', 'make > /dev/null 2>&1']],
  ])('given %s, then nothing matches', (_note, argv) => {
    expect(analyzeCommand(argv).findings).toEqual([]);
  });
});

describe('destructive commands: write targets', () => {
  it('given file-mutating programs and redirections, then their targets are reported', () => {
    expect(analyzeCommand(['cp', 'a', 'b', 'dest/']).write_targets.map((t) => t.path)).toEqual(['dest/']);
    expect(analyzeCommand(['mv', 'a', 'b']).write_targets.map((t) => t.path)).toEqual(['a', 'b']);
    expect(analyzeCommand(['truncate', '-s', '0', 'log.txt']).write_targets.map((t) => t.path)).toEqual(['log.txt']);
    expect(analyzeCommand(['sed', '-i', 's/a/b/', 'f.txt']).write_targets.map((t) => t.path)).toEqual(['f.txt']);
    expect(analyzeCommand(['sed', 's/a/b/', 'f.txt']).write_targets).toEqual([]);
    expect(analyzeShellScript('echo x > ../outside.txt').write_targets).toEqual([{ path: '../outside.txt', cwd_known: true }]);
  });

  it('given git commands that overwrite or remove working-tree files, then their paths are write targets', () => {
    expect(analyzeCommand(['git', 'checkout', '--', 'other_file']).write_targets).toEqual([{ path: 'other_file', cwd_known: true }]);
    expect(analyzeCommand(['git', 'checkout', '.']).write_targets.map((t) => t.path)).toEqual(['.']);
    expect(analyzeCommand(['git', 'restore', 'a.ts', 'b.ts']).write_targets.map((t) => t.path)).toEqual(['a.ts', 'b.ts']);
    expect(analyzeCommand(['git', 'restore', '--staged', 'a.ts']).write_targets).toEqual([]);
    expect(analyzeCommand(['git', 'rm', '-r', 'lib']).write_targets.map((t) => t.path)).toEqual(['lib']);
    expect(analyzeCommand(['git', '-C', 'elsewhere', 'checkout', '--', 'x']).write_targets).toEqual([{ path: 'x', cwd_known: false }]);
    expect(analyzeCommand(['git', 'status']).write_targets).toEqual([]);
  });

  it('given a cd in a shell string, then later relative targets cannot be placed', () => {
    expect(analyzeShellScript('cd / && touch x').write_targets).toEqual([{ path: 'x', cwd_known: false }]);
  });
});

describe('destructive commands: broad targets and severity', () => {
  it.each([
    ['/', true],
    ['/etc', true],
    ['/*', true],
    ['~', true],
    ['~/', true],
    ['.', true],
    ['..', true],
    ['*', true],
    ['./*', true],
    ['$DIR/', true],
    ['build', false],
    ['/home/user/project/build', false],
    ['src/*', false],
  ])('given %j, then broad: %s', (target, want) => {
    expect(isBroadTarget(target)).toBe(want);
  });

  it('given rm -rf of the root, a home or an unknown variable, then it is critical; of a build dir, high', () => {
    for (const target of ['/', '~', '$HOME', '.', '/*']) expect(analyzeCommand(['rm', '-rf', target]).findings[0]?.severity).toBe('critical');
    expect(analyzeCommand(['rm', '-rf', 'build']).findings[0]?.severity).toBe('high');
    expect(analyzeCommand(['rm', '-r', '--no-preserve-root', 'x']).findings[0]?.severity).toBe('critical');
  });
});

describe('destructive commands: properties', () => {
  const recursiveFlags = fc.constantFrom(['-rf'], ['-fr'], ['-r', '-f'], ['-f', '-r'], ['-R'], ['-Rf'], ['--recursive'], ['--recursive', '--force'], ['-r'], ['-vrf'], ['-rfv'], ['--rec']);
  const rmPath = fc.constantFrom('rm', '/bin/rm', '/usr/bin/rm', './rm', '../../bin/rm');
  const target = fc.constantFrom('/', 'build', '.', '~', '/var/lib/app', 'a b', '$HOME');
  const prefix = fc.constantFrom<string[]>([], ['sudo'], ['env'], ['/usr/bin/env'], ['env', '-i', 'X=1'], ['nice', '-n', '5'], ['timeout', '10'], ['nohup'], ['sudo', '-u', 'root']);
  const quote = (word: string, style: number) => [word, `'${word}'`, `"${word}"`, word.split('').join("''")][style % 4] as string;

  it('property: every rm -r variant is destructive, whatever the flag order, path prefix or wrapper', () => {
    fc.assert(
      fc.property(prefix, rmPath, recursiveFlags, target, (pre, rm, flags, t) => {
        expect(isDestructiveCommand([...pre, rm, ...flags, t])).toBe(true);
      }),
    );
  });

  it('property: every rm -r variant stays destructive wrapped in sh -c / bash -c with any quoting', () => {
    fc.assert(
      fc.property(fc.constantFrom('sh', 'bash', '/bin/sh', 'dash', 'zsh'), fc.constantFrom('-c', '-lc', '-ec', '-xec'), rmPath, recursiveFlags, fc.nat(), fc.nat(), fc.constantFrom('', 'true && ', 'cd /tmp; ', 'echo a | '), (shell, flag, rm, flags, q1, q2, lead) => {
        const script = `${lead}${quote(rm, q1)} ${flags.map((f) => quote(f, q2)).join(' ')} /`;
        expect(isDestructiveCommand([shell, flag, script]), script).toBe(true);
      }),
    );
  });

  it('property: git push with force in any spelling is destructive, with any global options before it', () => {
    const globals = fc.constantFrom<string[]>([], ['-c', 'x=y'], ['-C', 'repo'], ['--no-pager'], ['-c', 'user.name=a', '-C', '.'], ['--git-dir=.git']);
    const force = fc.constantFrom<string[]>(['--force'], ['-f'], ['--force-with-lease'], ['--force-with-lease=main:abc'], ['-fu'], ['-uf'], ['--forc'], ['origin', '+main'], ['origin', '+refs/heads/main:refs/heads/main']);
    fc.assert(
      fc.property(globals, force, (g, f) => {
        expect(isDestructiveCommand(['git', ...g, 'push', ...f])).toBe(true);
      }),
    );
  });

  it('property: DROP TABLE / TRUNCATE / DELETE without WHERE are found in any letter case and spacing', () => {
    const statement = fc.constantFrom('drop table users', 'DROP TABLE IF EXISTS users', 'truncate users', 'TRUNCATE TABLE users', 'delete from users', 'DELETE FROM users RETURNING *');
    const caseOf = (text: string, mask: number) => [...text].map((c, i) => ((mask >> i % 30) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');
    fc.assert(
      fc.property(statement, fc.integer({ min: 0, max: 2 ** 30 }), fc.constantFrom(' ', '  ', '\n', '\t', ' /* x */ '), (sql, mask, space) => {
        const text = caseOf(sql, mask).replace(/ /g, space);
        expect(destructiveSql(`select 1; ${text};`).length, text).toBeGreaterThan(0);
        expect(isDestructiveCommand(['psql', '-c', text])).toBe(true);
      }),
    );
  });
});
