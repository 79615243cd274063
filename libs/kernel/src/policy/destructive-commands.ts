/**
 * Destructive-command detection over argv (Hermit 6.2.3, OmegaOS "destructive
 * operation policy"). Commands are read as words, never by substring search
 * over a joined line: argv is walked through wrappers (`env`, `sudo`,
 * `timeout`, `xargs`, `ssh`, `git -c alias.*`, `find -exec`...), shell
 * strings (`sh -c`, `bash -lc`, `eval`, here-documents, pipes into a shell)
 * are split with `splitShell`, and SQL handed to a database client is lexed
 * with `destructiveSql`. Each program invocation is then matched against
 * `DESTRUCTIVE_PATTERNS`, a table of named patterns.
 *
 * What cannot be seen is not guessed to be safe: an unsplittable shell
 * string, a command name computed at run time (`$CMD`) and nesting deeper
 * than `MAX_NESTING` are findings too.
 */
import { clusterLetters, hasFlag, isLong, isShortCluster, longName, parseArgs, programName, splitAtDoubleDash, type OperandSpec } from './command-options.js';
import { splitShell } from './shell-words.js';
import { destructiveSql, type SqlFinding } from './sql-statements.js';

export type DestructiveSeverity = 'high' | 'critical';

export interface CommandFinding {
  /** The pattern that matched, e.g. `rm.recursive`, `git.push_force`, `sql.drop`, `shell.unparseable`. */
  readonly pattern_id: string;
  readonly severity: DestructiveSeverity;
  readonly summary: string;
  /** The words of the invocation that matched (after unwrapping). */
  readonly command: readonly string[];
}

/** A path a command may write, as spelled, and whether the working directory it is relative to is still known. */
export interface WriteTarget {
  readonly path: string;
  /** False after a `cd` in a shell string: relative paths can no longer be placed. */
  readonly cwd_known: boolean;
}

export interface CommandAnalysis {
  readonly destructive: boolean;
  readonly findings: readonly CommandFinding[];
  /** Paths the command writes or deletes (file-mutating programs, redirections). */
  readonly write_targets: readonly WriteTarget[];
  /** Every program name seen, wrappers included. */
  readonly programs: readonly string[];
}

export interface DestructivePattern {
  readonly id: string;
  readonly summary: string;
  readonly applies: (program: string) => boolean;
  /** The severity when this invocation matches, else undefined. */
  readonly match: (args: readonly string[], input: { readonly program: string; readonly stdin: string | null }) => DestructiveSeverity | undefined;
}

/** Deeper nesting of wrappers and shell strings than this is itself a finding. */
export const MAX_NESTING = 8;

const SAFE_DEVICES = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero', '/dev/random', '/dev/urandom']);

function isSafeDevice(path: string): boolean {
  return SAFE_DEVICES.has(path) || path.startsWith('/dev/fd/');
}

/** Absolute segments of `path`, clamped at `/` like the kernel does. */
function absoluteSegments(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return out;
}

/**
 * An operand whose blast radius is the whole machine, a home or the whole
 * workspace: `/`, `/etc`, `/*`, `~`, `.`, `..`, `*`, or anything with an
 * expansion (`$DIR/`) whose value is unknown.
 */
export function isBroadTarget(arg: string): boolean {
  if (arg.includes('$') || arg.includes('`')) return true;
  if (arg.startsWith('~')) return absoluteSegments(arg.slice(1)).length <= 1;
  if (arg.startsWith('/')) return absoluteSegments(arg).filter((s) => s !== '*').length <= 1;
  const relative: string[] = [];
  for (const part of arg.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (relative.length === 0) return true;
      relative.pop();
    } else relative.push(part);
  }
  return relative.length === 0 || relative.every((s) => s === '*' || s === '**');
}

// ---------------------------------------------------------------------------
// git

const GIT_GLOBAL_WITH_VALUE = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds']);

/** Config keys whose value git runs as a command (`-c core.pager='...'`). */
function isCommandBearingGitKey(key: string): boolean {
  const k = key.toLowerCase();
  return (
    ['core.pager', 'core.sshcommand', 'core.editor', 'core.fsmonitor', 'core.askpass', 'diff.external', 'credential.helper', 'gpg.program', 'sequence.editor', 'uploadpack.packobjectshook'].includes(k) ||
    k.startsWith('pager.') ||
    (k.startsWith('filter.') && (k.endsWith('.clean') || k.endsWith('.smudge') || k.endsWith('.process'))) ||
    (k.startsWith('merge.') && k.endsWith('.driver')) ||
    (k.startsWith('diff.') && (k.endsWith('.textconv') || k.endsWith('.command'))) ||
    (k.startsWith('credential.') && k.endsWith('.helper'))
  );
}

interface GitInvocation {
  readonly sub: string | undefined;
  readonly args: readonly string[];
  readonly config: readonly (readonly [string, string])[];
}

function parseGit(args: readonly string[]): GitInvocation {
  const config: [string, string][] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (GIT_GLOBAL_WITH_VALUE.has(arg)) {
      if (arg === '-c' && args[i + 1] !== undefined) {
        const pair = args[i + 1] as string;
        const eq = pair.indexOf('=');
        config.push(eq < 0 ? [pair, 'true'] : [pair.slice(0, eq), pair.slice(eq + 1)]);
      }
      i += 2;
    } else if (arg.startsWith('-')) {
      i += 1;
    } else break;
  }
  return { sub: args[i], args: args.slice(i + 1), config };
}

function gitMatch(sub: string, test: (args: readonly string[]) => DestructiveSeverity | undefined): DestructivePattern['match'] {
  return (args) => {
    const git = parseGit(args);
    return git.sub === sub ? test(git.args) : undefined;
  };
}

const gitPushForce = (args: readonly string[]): DestructiveSeverity | undefined => {
  const { before, after } = splitAtDoubleDash(args);
  for (let i = 0; i < before.length; i += 1) {
    const arg = before[i] as string;
    if (['force', 'force-with-lease', 'force-if-includes'].some((name) => isLong(arg, name))) return 'high';
    if (isShortCluster(arg)) {
      if (clusterLetters(arg, 'o').includes('f')) return 'high';
      if (arg === '-o') i += 1;
    }
  }
  const operands = [...parseArgs(before, { shortValues: 'o', longValues: ['push-option', 'repo', 'receive-pack', 'exec'] }).operands, ...after];
  return operands.some((refspec) => refspec.startsWith('+')) ? 'high' : undefined;
};

const gitPushDelete = (args: readonly string[]): DestructiveSeverity | undefined => {
  const { before, after } = splitAtDoubleDash(args);
  if (before.some((arg) => isLong(arg, 'delete') || isLong(arg, 'mirror', 2) || isLong(arg, 'prune', 2))) return 'high';
  if (before.some((arg) => isShortCluster(arg) && clusterLetters(arg, 'o').includes('d'))) return 'high';
  const operands = [...parseArgs(before, { shortValues: 'o', longValues: ['push-option', 'repo', 'receive-pack', 'exec'] }).operands, ...after];
  return operands.slice(1).some((refspec) => refspec.startsWith(':')) ? 'high' : undefined;
};

// ---------------------------------------------------------------------------
// kill

interface KillInvocation {
  /** The signal as spelled (`9`, `KILL`, `SIGTERM`), undefined for the default (TERM). */
  readonly signal: string | undefined;
  /** Process ids, negative process-group ids and job specs. */
  readonly targets: readonly string[];
  /** `kill -l` / `-L`: lists signals, kills nothing. */
  readonly listing: boolean;
}

/** Reads `kill` arguments the way procps and shell builtins do: the first `-N`/`-NAME` is the signal, later `-N` are process groups. */
function parseKill(args: readonly string[]): KillInvocation {
  let signal: string | undefined;
  let listing = false;
  const targets: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') {
      targets.push(...args.slice(i + 1));
      break;
    }
    if (arg === '-l' || arg === '-L' || arg === '--list' || arg === '--table') {
      listing = true;
      continue;
    }
    if (arg === '-s' || arg === '-n' || arg === '--signal') {
      signal = args[i + 1];
      i += 1;
      continue;
    }
    if (arg.startsWith('--signal=')) {
      signal = arg.slice('--signal='.length);
      continue;
    }
    if (signal === undefined && targets.length === 0 && /^-(?:[0-9]+|[A-Za-z][A-Za-z0-9+-]*)$/.test(arg)) {
      signal = arg.startsWith('-s') && arg.length > 2 && !/^-SIG|^-STOP|^-SEGV|^-SYS/i.test(arg) ? arg.slice(2) : arg.slice(1);
      continue;
    }
    if (arg.startsWith('-') && !/^-[0-9]+$/.test(arg)) continue;
    targets.push(arg);
  }
  return { signal, targets, listing };
}

function signalName(signal: string | undefined): string {
  return (signal ?? 'TERM').toUpperCase().replace(/^SIG/, '');
}

function isSigkill(signal: string | undefined): boolean {
  const s = signalName(signal);
  return s === 'KILL' || s === '9';
}

/**
 * A kill target the task itself spawned, as far as argv can tell: `$!` (the
 * last background child of this shell) and job specs (`%1`, `%%`, `%+`,
 * `%name`), which name only this shell's own jobs. A pid spelled as a number
 * or held in any other variable cannot be traced to the task, so killing it
 * is destructive (OmegaOS: "kill -9 of a process the mission did not spawn").
 */
function isOwnChild(target: string): boolean {
  return target === '$!' || target === '${!}' || /^%(?:%|\+|-|[0-9]+|[A-Za-z?][^\s]*)$/.test(target);
}

function killMatch(wantSigkill: boolean): DestructivePattern['match'] {
  return (args) => {
    const kill = parseKill(args);
    if (kill.listing || kill.targets.length === 0) return undefined;
    if (isSigkill(kill.signal) !== wantSigkill) return undefined;
    if (signalName(kill.signal) === '0') return undefined; // signal 0 only probes for existence
    if (kill.targets.every(isOwnChild)) return undefined;
    return kill.targets.some((pid) => pid === '1' || pid === '-1') ? 'critical' : 'high';
  };
}

// ---------------------------------------------------------------------------
// audit, history and logging

const AUDIT_UNITS = /^(?:auditd|systemd-journald|journald|rsyslog|rsyslogd|syslog|syslog-ng|systemd-journald-audit)(?:\.service|\.socket)?$/;
const HISTORY_VARIABLES = new Set(['HISTFILE', 'HISTSIZE', 'HISTFILESIZE', 'HISTCONTROL', 'HISTIGNORE']);

/**
 * True when an assignment (`NAME=value`, as a prefix, or under `export`,
 * `declare`...) turns shell history off: HISTFILE to nothing or /dev/null,
 * HISTSIZE / HISTFILESIZE to 0, HISTCONTROL / HISTIGNORE to ignore everything.
 */
export function disablesHistory(assignment: string): boolean {
  const eq = assignment.indexOf('=');
  if (eq <= 0) return false;
  const name = assignment.slice(0, eq).replace(/\+$/, '');
  const value = assignment.slice(eq + 1).replace(/^['"]|['"]$/g, '');
  if (!HISTORY_VARIABLES.has(name)) return false;
  if (name === 'HISTFILE') return value === '' || value === '/dev/null';
  if (name === 'HISTSIZE' || name === 'HISTFILESIZE') return value === '0' || value === '';
  return value === '*' || value.split(':').includes('*');
}

function systemctlVerbAndUnits(args: readonly string[]): { verb: string | undefined; units: readonly string[] } {
  const operands = parseArgs(args, { shortValues: 'HMtpsn', longValues: ['host', 'machine', 'type', 'property', 'signal', 'lines', 'output', 'kill-whom', 'root', 'state', 'job-mode'] }).operands;
  return { verb: operands[0], units: operands.slice(1) };
}

// ---------------------------------------------------------------------------
// SQL clients

const SQL_CLIENTS = new Set(['psql', 'mysql', 'mariadb', 'sqlite3', 'sqlite', 'duckdb', 'cockroach', 'clickhouse-client']);

/** SQL texts an invocation of a database client carries (options, operands, stdin). */
function sqlTexts(program: string, args: readonly string[], stdin: string | null): string[] {
  const texts: string[] = stdin === null ? [] : [stdin];
  const parsed = (spec: OperandSpec) => parseArgs(args, spec);
  switch (program) {
    case 'psql':
    case 'duckdb': {
      const p = parsed({ shortValues: 'cdfhpUvoLTFRPs', longValues: ['command', 'dbname', 'file', 'host', 'port', 'username', 'set', 'variable', 'output'] });
      texts.push(...(p.values.get('c') ?? []), ...(p.values.get('command') ?? []));
      break;
    }
    case 'mysql':
    case 'mariadb': {
      const p = parsed({ shortValues: 'eDhPuSp', longValues: ['execute', 'database', 'host', 'port', 'user', 'socket'] });
      texts.push(...(p.values.get('e') ?? []), ...(p.values.get('execute') ?? []));
      break;
    }
    case 'sqlite3':
    case 'sqlite': {
      const values: string[] = [];
      const operands: string[] = [];
      for (let i = 0; i < args.length; i += 1) {
        const arg = args[i] as string;
        if (arg === '-cmd') values.push(args[(i += 1)] ?? '');
        else if (['-separator', '-nullvalue', '-newline', '-init', '-mmap', '-pagecache', '-lookaside', '-heap', '-vfs', '-maxsize'].includes(arg)) i += 1;
        else if (arg.startsWith('-')) continue;
        else operands.push(arg);
      }
      texts.push(...values, ...operands.slice(1));
      break;
    }
    default:
      texts.push(...args.filter((arg) => !arg.startsWith('-')));
  }
  return texts;
}

function sqlPattern(id: SqlFinding['pattern_id'], summary: string, severity: DestructiveSeverity): DestructivePattern {
  return {
    id,
    summary,
    applies: (name) => SQL_CLIENTS.has(name),
    match: (args, { program, stdin }) => (sqlTexts(program, args, stdin).some((text) => destructiveSql(text).some((f) => f.pattern_id === id)) ? severity : undefined),
  };
}

// ---------------------------------------------------------------------------
// The table

const DISK_TOOLS = new Set(['mke2fs', 'mkswap', 'wipefs', 'fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk', 'gdisk', 'blkdiscard']);

const PATTERNS: DestructivePattern[] = [
  {
    id: 'rm.recursive',
    summary: 'recursive delete (rm -r / -R / --recursive, any flag order)',
    applies: (p) => p === 'rm',
    match: (args) => {
      if (!hasFlag(args, 'r', 'recursive') && !hasFlag(args, 'R', null)) return undefined;
      const broad = parseArgs(args).operands.some(isBroadTarget) || hasFlag(args, null, 'no-preserve-root');
      return broad ? 'critical' : 'high';
    },
  },
  { id: 'git.push_force', summary: 'git push --force / -f / --force-with-lease / +refspec', applies: (p) => p === 'git', match: gitMatch('push', gitPushForce) },
  { id: 'git.push_delete', summary: 'git push deleting remote refs (--delete, -d, :ref, --mirror, --prune)', applies: (p) => p === 'git', match: gitMatch('push', gitPushDelete) },
  {
    id: 'git.reset_hard',
    summary: 'git reset --hard',
    applies: (p) => p === 'git',
    match: gitMatch('reset', (args) => (splitAtDoubleDash(args).before.some((arg) => isLong(arg, 'hard')) ? 'high' : undefined)),
  },
  {
    id: 'git.branch_delete',
    summary: 'git branch -d / --delete (a branch the task may not have created)',
    applies: (p) => p === 'git',
    match: gitMatch('branch', (args) => {
      const letters = splitAtDoubleDash(args).before.filter(isShortCluster).map((arg) => clusterLetters(arg, 'ut')).join('');
      const deleting = letters.includes('d') || hasFlag(args, null, 'delete');
      const forcing = letters.includes('D') || letters.includes('M') || letters.includes('f') || hasFlag(args, null, 'force');
      return deleting && !forcing ? 'high' : undefined;
    }),
  },
  {
    id: 'git.tag_delete',
    summary: 'git tag -d / --delete',
    applies: (p) => p === 'git',
    match: gitMatch('tag', (args) => (hasFlag(args, 'd', 'delete', 'umF') ? 'high' : undefined)),
  },
  {
    id: 'git.branch_force_delete',
    summary: 'git branch -D / --delete --force / -M',
    applies: (p) => p === 'git',
    match: gitMatch('branch', (args) => {
      const letters = splitAtDoubleDash(args).before.filter(isShortCluster).map((arg) => clusterLetters(arg, 'ut')).join('');
      if (letters.includes('D') || letters.includes('M')) return 'high';
      const deleting = letters.includes('d') || hasFlag(args, null, 'delete');
      const forcing = letters.includes('f') || hasFlag(args, null, 'force');
      return deleting && forcing ? 'high' : undefined;
    }),
  },
  {
    id: 'git.clean_force',
    summary: 'git clean -f (untracked files deleted)',
    applies: (p) => p === 'git',
    match: gitMatch('clean', (args) => (hasFlag(args, 'f', 'force', 'e') && !hasFlag(args, 'n', 'dry-run', 'e') ? 'high' : undefined)),
  },
  {
    id: 'git.checkout_discard',
    summary: 'git checkout --force / -- <paths> / . (uncommitted changes discarded)',
    applies: (p) => p === 'git',
    match: gitMatch('checkout', (args) => {
      if (hasFlag(args, 'f', 'force', 'bBt')) return 'high';
      const { before, after } = splitAtDoubleDash(args);
      return after.length > 0 || before.includes('.') ? 'high' : undefined;
    }),
  },
  {
    id: 'git.restore_worktree',
    summary: 'git restore of the working tree (uncommitted changes discarded)',
    applies: (p) => p === 'git',
    match: gitMatch('restore', (args) => (hasFlag(args, 'S', 'staged', 's') && !hasFlag(args, 'W', 'worktree', 's') ? undefined : 'high')),
  },
  {
    id: 'git.stash_drop',
    summary: 'git stash drop / clear',
    applies: (p) => p === 'git',
    match: gitMatch('stash', (args) => (args[0] === 'drop' || args[0] === 'clear' ? 'high' : undefined)),
  },
  {
    id: 'git.history_rewrite',
    summary: 'git filter-branch / filter-repo / reflog expire / update-ref -d',
    applies: (p) => p === 'git',
    match: (args) => {
      const git = parseGit(args);
      if (git.sub === 'filter-branch' || git.sub === 'filter-repo') return 'high';
      if (git.sub === 'reflog' && (git.args[0] === 'expire' || git.args[0] === 'delete')) return 'high';
      if (git.sub === 'update-ref' && hasFlag(git.args, 'd', null)) return 'high';
      return undefined;
    },
  },
  {
    id: 'disk.format',
    summary: 'filesystem or partition table rewrite (mkfs*, wipefs, fdisk, parted...)',
    applies: (p) => p.startsWith('mkfs') || DISK_TOOLS.has(p),
    match: () => 'critical',
  },
  {
    id: 'dd.device_write',
    summary: 'dd writing to a device (of=/dev/...)',
    applies: (p) => p === 'dd',
    match: (args) => (args.some((arg) => arg.startsWith('of=/dev/') && !isSafeDevice(arg.slice(3))) ? 'critical' : undefined),
  },
  { id: 'kill.sigkill', summary: 'kill -9 / -KILL / -s KILL of a process the task did not spawn', applies: (p) => p === 'kill', match: killMatch(true) },
  { id: 'kill.process', summary: 'kill of a process the task did not spawn (any pid or variable but $! and job specs)', applies: (p) => p === 'kill', match: killMatch(false) },
  {
    id: 'kill.by_name',
    summary: 'pkill / killall / skill / fuser -k (by name: never only the task\'s own processes)',
    applies: (p) => ['pkill', 'killall', 'killall5', 'skill', 'slay', 'fuser'].includes(p),
    match: (args, { program }) => (program !== 'fuser' || hasFlag(args, 'k', 'kill', 'sn') ? 'high' : undefined),
  },
  {
    id: 'service.stop',
    summary: 'systemctl stop / kill / disable / mask, service ... stop (processes the task did not spawn)',
    applies: (p) => p === 'systemctl' || p === 'service',
    match: (args, { program }) => {
      if (program === 'service') return ['stop', 'force-stop', 'kill'].includes(parseArgs(args).operands[1] ?? '') ? 'high' : undefined;
      const { verb } = systemctlVerbAndUnits(args);
      return verb !== undefined && ['stop', 'kill', 'disable', 'mask', 'isolate'].includes(verb) ? 'high' : undefined;
    },
  },
  {
    id: 'audit.disable',
    summary: 'audit or history logging turned off or erased (auditctl -e 0 / -D, stopping auditd or journald, journalctl --vacuum, history -c, unset HISTFILE, set +o history)',
    applies: (p) => ['auditctl', 'systemctl', 'service', 'chkconfig', 'update-rc.d', 'journalctl', 'history', 'unset', 'set', 'export', 'declare', 'typeset', 'readonly', 'local', 'shopt'].includes(p),
    match: (args, { program }) => {
      switch (program) {
        case 'auditctl': {
          const parsed = parseArgs(args, { shortValues: 'abeFfklmprRSswW', longValues: ['backlog_wait_time', 'reset-lost'] });
          if (hasFlag(args, 'D', null, 'abeFfklmprRSswW')) return 'critical';
          if ((parsed.values.get('e') ?? []).includes('0')) return 'critical';
          return [...(parsed.values.get('a') ?? []), ...(parsed.values.get('A') ?? [])].some((rule) => rule.split(',').includes('never')) ? 'critical' : undefined;
        }
        case 'systemctl': {
          const { verb, units } = systemctlVerbAndUnits(args);
          return verb !== undefined && ['stop', 'kill', 'disable', 'mask'].includes(verb) && units.some((unit) => AUDIT_UNITS.test(unit)) ? 'critical' : undefined;
        }
        case 'service': {
          const [unit, verb] = parseArgs(args).operands;
          return unit !== undefined && AUDIT_UNITS.test(unit) && ['stop', 'force-stop', 'kill'].includes(verb ?? '') ? 'critical' : undefined;
        }
        case 'chkconfig':
        case 'update-rc.d': {
          const [unit, verb] = parseArgs(args).operands;
          return unit !== undefined && AUDIT_UNITS.test(unit) && ['off', 'disable', 'remove'].includes(verb ?? '') ? 'critical' : undefined;
        }
        case 'journalctl':
          return args.some((arg) => ['vacuum-size', 'vacuum-time', 'vacuum-files'].some((name) => isLong(arg, name, 8))) ? 'critical' : undefined;
        case 'history':
          return hasFlag(args, 'c', null) || hasFlag(args, 'd', null) ? 'critical' : undefined;
        case 'unset':
          return parseArgs(args).operands.some((name) => name === 'HISTFILE') ? 'critical' : undefined;
        case 'set':
          return args.some((arg, i) => arg === '+o' && args[i + 1] === 'history') ? 'critical' : undefined;
        case 'shopt':
          return hasFlag(args, 'u', null) && hasFlag(args, 'o', null) && args.includes('history') ? 'critical' : undefined;
        default:
          return args.some(disablesHistory) ? 'critical' : undefined;
      }
    },
  },
  {
    id: 'cron.remove_all',
    summary: 'crontab -r (every scheduled job, backups included, removed)',
    applies: (p) => p === 'crontab',
    match: (args) => (hasFlag(args, 'r', null, 'u') ? 'high' : undefined),
  },
  { id: 'shred', summary: 'shred (unrecoverable overwrite)', applies: (p) => p === 'shred', match: () => 'high' },
  {
    id: 'find.delete',
    summary: 'find -delete',
    applies: (p) => p === 'find',
    match: (args) => (args.includes('-delete') ? 'high' : undefined),
  },
  {
    id: 'permissions.recursive_broad',
    summary: 'recursive chmod / chown / chgrp of /, ~ or the whole workspace',
    applies: (p) => p === 'chmod' || p === 'chown' || p === 'chgrp',
    match: (args) => ((hasFlag(args, 'R', 'recursive') && parseArgs(args).operands.slice(1).some(isBroadTarget)) ? 'critical' : undefined),
  },
  {
    id: 'system.power',
    summary: 'shutdown / reboot / halt / poweroff',
    applies: (p) => ['shutdown', 'reboot', 'halt', 'poweroff', 'init', 'telinit', 'systemctl'].includes(p),
    match: (args) => {
      if (args.length === 0) return 'critical';
      const first = parseArgs(args).operands[0];
      if (first === undefined) return 'critical';
      if (['0', '6'].includes(first) || ['poweroff', 'reboot', 'halt', 'kexec', 'emergency', 'rescue'].includes(first)) return 'critical';
      return /^[0-9]+$/.test(first) || first === 'now' || first.startsWith('+') ? 'critical' : undefined;
    },
  },
  sqlPattern('sql.drop', 'SQL DROP TABLE / DATABASE / SCHEMA', 'critical'),
  sqlPattern('sql.truncate', 'SQL TRUNCATE', 'critical'),
  sqlPattern('sql.delete_without_where', 'SQL DELETE FROM without WHERE', 'critical'),
  sqlPattern('sql.update_without_where', 'SQL UPDATE without WHERE', 'critical'),
  {
    id: 'sql.drop_tool',
    summary: 'dropdb / dropuser / mysqladmin drop',
    applies: (p) => ['dropdb', 'dropuser', 'mysqladmin'].includes(p),
    match: (args, { program }) => (program !== 'mysqladmin' || args.some((a) => a.toLowerCase() === 'drop') ? 'critical' : undefined),
  },
  {
    id: 'redis.flush',
    summary: 'redis-cli FLUSHALL / FLUSHDB',
    applies: (p) => p === 'redis-cli',
    match: (args, { stdin }) => ([...args, ...(stdin ?? '').split(/\s+/)].some((a) => ['flushall', 'flushdb'].includes(a.toLowerCase())) ? 'high' : undefined),
  },
];

/** The destructive patterns, as data. Add a row to recognise a new one. */
export const DESTRUCTIVE_PATTERNS: readonly DestructivePattern[] = Object.freeze(PATTERNS);

// ---------------------------------------------------------------------------
// Wrappers: programs that run another command

type Expansion = { readonly argv: readonly string[] } | { readonly script: string };
interface Unwrapped {
  readonly expansions: readonly Expansion[];
  /** The wrapper itself is not matched against the table (its arguments belong to the inner command). */
  readonly final: boolean;
}

/** Index of the first operand after options; `shortValues`/`longValues` take a value. */
function firstOperand(args: readonly string[], shortValues = '', longValues: readonly string[] = []): number {
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (arg === '--') return i + 1;
    const long = longName(arg);
    if (long !== undefined) {
      i += !arg.includes('=') && longValues.some((name) => name.startsWith(long)) ? 2 : 1;
      continue;
    }
    if (isShortCluster(arg)) {
      const letters = clusterLetters(arg, shortValues);
      const last = letters[letters.length - 1] as string;
      i += shortValues.includes(last) && arg.length === letters.length + 1 ? 2 : 1;
      continue;
    }
    return i;
  }
  return i;
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const rest = (args: readonly string[], index: number): Unwrapped => ({ expansions: index < args.length ? [{ argv: args.slice(index) }] : [], final: true });

const simpleWrapper = (shortValues = '', longValues: readonly string[] = [], skipOperands = 0) => (args: readonly string[]): Unwrapped =>
  rest(args, firstOperand(args, shortValues, longValues) + skipOperands);

/** `-c CMD` / `--command=CMD` style: the value is a shell string. */
function commandOption(args: readonly string[], letter: string, long: string, shortValues: string): string | undefined {
  const parsed = parseArgs(args, { shortValues: shortValues + letter, longValues: [long] });
  return parsed.values.get(letter)?.[0] ?? parsed.values.get(long)?.[0];
}

/** `env -S STR`, `-SSTR`, `--split-string=STR`, `--split-string STR`: the string and how many arguments it took. */
function envSplitString(arg: string, next: string | undefined): { value: string; consumed: number } | undefined {
  if (arg === '-S' || (isLong(arg, 'split-string', 2) && !arg.includes('='))) return { value: next ?? '', consumed: 2 };
  if (arg.startsWith('-S')) return { value: arg.slice(2), consumed: 1 };
  if (isLong(arg, 'split-string', 2)) return { value: arg.slice(arg.indexOf('=') + 1), consumed: 1 };
  return undefined;
}

const WRAPPERS: ReadonlyMap<string, (args: readonly string[]) => Unwrapped | undefined> = new Map<string, (args: readonly string[]) => Unwrapped | undefined>([
  [
    'env',
    (args) => {
      const history: Expansion[] = [];
      let i = 0;
      while (i < args.length) {
        const arg = args[i] as string;
        if (arg === '--') {
          i += 1;
          break;
        }
        const split = envSplitString(arg, args[i + 1]);
        if (split !== undefined) {
          // `env -S 'rm -rf' /`: the string is split into words, the remaining arguments follow them.
          return { expansions: [...history, { script: [split.value, ...args.slice(i + split.consumed).map(shellQuote)].join(' ') }], final: true };
        }
        if (arg === '-u' || arg === '-C' || isLong(arg, 'unset') || isLong(arg, 'chdir')) {
          i += arg.includes('=') ? 1 : 2;
          continue;
        }
        if (arg.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
          // Re-spelled as a shell assignment so that the script walk reports it like `HISTFILE=/dev/null cmd`.
          if (disablesHistory(arg)) history.push({ script: `${arg.slice(0, arg.indexOf('='))}=${shellQuote(arg.slice(arg.indexOf('=') + 1))}` });
          i += 1;
          continue;
        }
        break;
      }
      const inner = rest(args, i);
      return { expansions: [...history, ...inner.expansions], final: true };
    },
  ],
  ['sudo', simpleWrapper('ugpCDrtTUR', ['user', 'group', 'prompt', 'close-from', 'chdir', 'role', 'type', 'command-timeout', 'other-user', 'chroot', 'host'])],
  ['doas', simpleWrapper('uC')],
  ['nice', simpleWrapper('n', ['adjustment'])],
  ['nohup', simpleWrapper()],
  ['setsid', simpleWrapper()],
  ['exec', simpleWrapper('a')],
  ['builtin', simpleWrapper()],
  ['command', (args) => (hasFlag(args, 'v', null) || hasFlag(args, 'V', null) ? { expansions: [], final: true } : rest(args, firstOperand(args)))],
  ['time', simpleWrapper('fo', ['format', 'output'])],
  ['stdbuf', simpleWrapper('ioe', ['input', 'output', 'error'])],
  ['ionice', (args) => (hasFlag(args, 'p', 'pid', 'cnu') || hasFlag(args, 'P', 'pgid', 'cnu') ? { expansions: [], final: true } : rest(args, firstOperand(args, 'cn', ['class', 'classdata'])))],
  ['chroot', simpleWrapper('', ['userspec', 'groups'], 1)],
  ['timeout', simpleWrapper('sk', ['signal', 'kill-after'], 1)],
  ['unbuffer', simpleWrapper()],
  ['busybox', (args) => rest(args, firstOperand(args))],
  [
    'xargs',
    (args) => {
      const index = firstOperand(args, 'adEILnPs', ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var', 'max-lines', 'replace', 'eof']);
      // The operands xargs appends are unknown at decision time: stand them in as an expansion.
      const inner = index < args.length ? args.slice(index) : ['echo'];
      return { expansions: [{ argv: [...inner, '${xargs}'] }], final: true };
    },
  ],
  [
    'watch',
    (args) => {
      const index = firstOperand(args, 'nqd', ['interval', 'differences']);
      return { expansions: index < args.length ? [{ script: args.slice(index).join(' ') }] : [], final: true };
    },
  ],
  [
    'flock',
    (args) => {
      const script = commandOption(args, 'c', 'command', 'wEn');
      if (script !== undefined) return { expansions: [{ script }], final: true };
      return rest(args, firstOperand(args, 'wE', ['timeout', 'conflict-exit-code']) + 1);
    },
  ],
  [
    'ssh',
    (args) => {
      const index = firstOperand(args, 'BbcDEeFIiJLlmOoPpQRSWw');
      const remote = args.slice(index + 1);
      return { expansions: remote.length > 0 ? [{ script: remote.join(' ') }] : [], final: true };
    },
  ],
  ...(['su', 'runuser', 'script'] as const).map(
    (name) =>
      [
        name,
        (args: readonly string[]): Unwrapped => {
          const script = commandOption(args, 'c', 'command', 'gGsuw');
          return { expansions: script === undefined ? [] : [{ script }], final: true };
        },
      ] as const,
  ),
  ['eval', (args) => ({ expansions: [{ script: args.join(' ') }], final: true })],
  [
    'find',
    (args) => {
      const expansions: Expansion[] = [];
      for (let i = 0; i < args.length; i += 1) {
        if (['-exec', '-execdir', '-ok', '-okdir'].includes(args[i] as string)) {
          const end = args.findIndex((arg, j) => j > i && (arg === ';' || arg === '+'));
          const inner = args.slice(i + 1, end < 0 ? args.length : end);
          if (inner.length > 0) expansions.push({ argv: inner });
          i = end < 0 ? args.length : end;
        }
      }
      return { expansions, final: false };
    },
  ],
  [
    'git',
    (args) => {
      const git = parseGit(args);
      const expansions: Expansion[] = git.config.filter(([key]) => isCommandBearingGitKey(key)).map(([, value]) => ({ script: value.replace(/^!/, '') }));
      const alias = git.sub === undefined ? undefined : git.config.find(([key]) => key.toLowerCase() === `alias.${(git.sub as string).toLowerCase()}`);
      if (alias === undefined) return expansions.length > 0 ? { expansions, final: false } : undefined;
      const value = alias[1];
      if (value.startsWith('!')) expansions.push({ script: [value.slice(1), ...git.args.map(shellQuote)].join(' ') });
      else {
        const split = splitShell(value);
        const words = split.ok && split.commands.length === 1 ? (split.commands[0]?.words ?? []) : undefined;
        expansions.push(words === undefined ? { script: `git ${value}` } : { argv: ['git', ...words, ...git.args] });
      }
      return { expansions, final: true };
    },
  ],
]);

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'yash', 'posh', 'rbash', 'tcsh', 'csh']);

/** What a shell invocation runs: an inline `-c` string, its stdin, or a script file (opaque). */
function shellInput(args: readonly string[]): { kind: 'inline'; script: string } | { kind: 'stdin' } | { kind: 'file' } {
  let inline = false;
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (arg === '--' || arg === '-') {
      i += 1;
      break;
    }
    if (arg === '-o' || arg === '+o' || arg === '-O' || arg === '+O' || arg === '--rcfile' || arg === '--init-file') {
      i += 2;
      continue;
    }
    if (arg.startsWith('--')) {
      i += 1;
      continue;
    }
    if ((arg.startsWith('-') || arg.startsWith('+')) && arg.length > 1) {
      if (clusterLetters(arg, 'oO').includes('c')) inline = true;
      i += 1;
      continue;
    }
    break;
  }
  if (inline) return { kind: 'inline', script: args[i] ?? '' };
  return i < args.length ? { kind: 'file' } : { kind: 'stdin' };
}

// ---------------------------------------------------------------------------
// Write targets of file-mutating programs

const operandsOf = (spec: OperandSpec = {}) => (args: readonly string[]) => parseArgs(args, spec).operands;

function lastOperandAndTarget(spec: OperandSpec): (args: readonly string[]) => readonly string[] {
  return (args) => {
    const parsed = parseArgs(args, spec);
    const target = [...(parsed.values.get('t') ?? []), ...(parsed.values.get('target-directory') ?? [])];
    if (target.length > 0) return target;
    return parsed.operands.length >= 2 ? parsed.operands.slice(-1) : [];
  };
}

/** Paths each program writes; a `WriteTarget` with `cwd_known: false` when the program moves its own base directory. */
const WRITERS: ReadonlyMap<string, (args: readonly string[]) => readonly (string | WriteTarget)[]> = new Map<string, (args: readonly string[]) => readonly (string | WriteTarget)[]>([
  ['rm', operandsOf()],
  ['rmdir', operandsOf()],
  ['unlink', operandsOf()],
  ['shred', operandsOf({ shortValues: 'ns', longValues: ['iterations', 'size', 'random-source'] })],
  ['touch', operandsOf({ shortValues: 'dtr', longValues: ['date', 'reference', 'time'] })],
  ['mkdir', operandsOf({ shortValues: 'm', longValues: ['mode', 'context'] })],
  ['truncate', operandsOf({ shortValues: 'sr', longValues: ['size', 'reference'] })],
  ['tee', operandsOf()],
  [
    'mv',
    (args) => {
      const parsed = parseArgs(args, { shortValues: 'tS', longValues: ['target-directory', 'suffix'] });
      return [...parsed.operands, ...(parsed.values.get('t') ?? []), ...(parsed.values.get('target-directory') ?? [])];
    },
  ],
  ['cp', lastOperandAndTarget({ shortValues: 'tS', longValues: ['target-directory', 'suffix'] })],
  ['ln', lastOperandAndTarget({ shortValues: 'tS', longValues: ['target-directory', 'suffix'] })],
  ['install', lastOperandAndTarget({ shortValues: 'tSmogZ', longValues: ['target-directory', 'suffix', 'mode', 'owner', 'group'] })],
  ...(['chmod', 'chown', 'chgrp'] as const).map(
    (name) =>
      [
        name,
        (args: readonly string[]) => {
          const parsed = parseArgs(args, { longValues: ['reference', 'from'] });
          return parsed.values.has('reference') ? parsed.operands : parsed.operands.slice(1);
        },
      ] as const,
  ),
  ['dd', (args) => args.filter((arg) => arg.startsWith('of=')).map((arg) => arg.slice(3))],
  [
    'git',
    (args) => {
      // Working-tree paths git overwrites or removes (OmegaOS: `git checkout -- other_file` mutates outside files_owned).
      const git = parseGit(args);
      const { before, after } = splitAtDoubleDash(git.args);
      let paths: readonly string[];
      switch (git.sub) {
        case 'checkout':
          paths = before.includes('.') ? ['.', ...after] : after;
          break;
        case 'restore':
          paths = hasFlag(git.args, 'S', 'staged', 's') && !hasFlag(git.args, 'W', 'worktree', 's') ? [] : parseArgs(git.args, { shortValues: 's', longValues: ['source', 'pathspec-from-file'] }).operands;
          break;
        case 'rm':
        case 'mv':
          paths = parseArgs(git.args).operands;
          break;
        default:
          paths = [];
      }
      // `-C dir` / `--work-tree` move the base the paths are relative to: they can no longer be placed.
      const moved = args.slice(0, args.length - git.args.length).some((arg) => arg === '-C' || isLong(arg, 'work-tree') || isLong(arg, 'git-dir'));
      return moved ? paths.map((path) => ({ path, cwd_known: false })) : paths;
    },
  ],
  [
    'sed',
    (args) => {
      const inPlace = args.some((arg) => isLong(arg, 'in-place', 2) || (isShortCluster(arg) && clusterLetters(arg, 'efl').includes('i')));
      if (!inPlace) return [];
      const parsed = parseArgs(args, { shortValues: 'efl', longValues: ['expression', 'file', 'line-length'] });
      const hasScript = ['e', 'f', 'expression', 'file'].some((key) => parsed.values.has(key));
      return hasScript ? parsed.operands : parsed.operands.slice(1);
    },
  ],
]);

// ---------------------------------------------------------------------------
// The walk

interface Collector {
  readonly findings: CommandFinding[];
  readonly targets: WriteTarget[];
  readonly programs: Set<string>;
}

const RESERVED_PREFIX = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', '(', 'time', 'fi', 'done', 'esac', 'coproc']);
const HEADER_WORDS = new Set(['for', 'select', 'case']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const WRITE_REDIRECTIONS = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);

function isDynamic(word: string): boolean {
  return word.includes('$') || word.includes('`');
}

function addTarget(out: Collector, path: string, cwdKnown: boolean, command: readonly string[]): void {
  if (path === '-' || path.length === 0) return;
  if (path.startsWith('/dev/')) {
    if (!isSafeDevice(path)) out.findings.push({ pattern_id: 'device.write', severity: 'critical', summary: `write to the device ${path}`, command });
    return;
  }
  out.targets.push({ path, cwd_known: cwdKnown });
}

/** The patterns that apply to a program name (`applies` depends on the name alone), bounded: few programs recur. */
const applicable = new Map<string, readonly DestructivePattern[]>();
const APPLICABLE_CACHE_SIZE = 512;

function patternsFor(program: string): readonly DestructivePattern[] {
  let patterns = applicable.get(program);
  if (patterns === undefined) {
    patterns = DESTRUCTIVE_PATTERNS.filter((pattern) => pattern.applies(program));
    if (applicable.size >= APPLICABLE_CACHE_SIZE) applicable.clear();
    applicable.set(program, patterns);
  }
  return patterns;
}

function analyzeArgv(words: readonly string[], depth: number, cwdKnown: boolean, stdin: string | null, fromShell: boolean, out: Collector): void {
  if (words.length === 0) return;
  if (depth > MAX_NESTING) {
    out.findings.push({ pattern_id: 'command.nesting_too_deep', severity: 'high', summary: `more than ${MAX_NESTING} nested wrappers or shell strings`, command: words });
    return;
  }
  const first = words[0] as string;
  if (fromShell && isDynamic(first)) {
    out.findings.push({ pattern_id: 'shell.dynamic_command', severity: 'high', summary: 'the program is computed at run time', command: words });
    return;
  }
  const program = programName(first);
  const args = words.slice(1);
  out.programs.add(program);
  if (SHELLS.has(program)) {
    const input = shellInput(args);
    if (input.kind === 'inline') analyzeScript(input.script, depth + 1, cwdKnown, out);
    else if (input.kind === 'stdin' && stdin !== null) analyzeScript(stdin, depth + 1, cwdKnown, out);
    return;
  }
  const unwrap = WRAPPERS.get(program);
  const unwrapped = unwrap?.(args);
  if (unwrapped !== undefined) {
    for (const expansion of unwrapped.expansions) {
      if ('argv' in expansion) analyzeArgv(expansion.argv, depth + 1, cwdKnown, stdin, fromShell, out);
      else analyzeScript(expansion.script, depth + 1, cwdKnown, out);
    }
    if (unwrapped.final) return;
  }
  for (const pattern of patternsFor(program)) {
    const severity = pattern.match(args, { program, stdin });
    if (severity !== undefined) out.findings.push({ pattern_id: pattern.id, severity, summary: pattern.summary, command: words });
  }
  for (const target of WRITERS.get(program)?.(args) ?? []) {
    if (typeof target === 'string') addTarget(out, target, cwdKnown, words);
    else addTarget(out, target.path, cwdKnown && target.cwd_known, words);
  }
}

function analyzeScript(script: string, depth: number, cwdKnown: boolean, out: Collector): void {
  if (depth > MAX_NESTING) {
    out.findings.push({ pattern_id: 'command.nesting_too_deep', severity: 'high', summary: `more than ${MAX_NESTING} nested wrappers or shell strings`, command: [script] });
    return;
  }
  const parsed = splitShell(script);
  for (const substitution of parsed.substitutions) analyzeScript(substitution, depth + 1, cwdKnown, out);
  if (!parsed.ok) {
    out.findings.push({ pattern_id: 'shell.unparseable', severity: 'high', summary: `a shell string that cannot be split (${parsed.error})`, command: [script] });
    return;
  }
  let known = cwdKnown;
  let previous: { pipeline: number; text: string } | null = null;
  for (const command of parsed.commands) {
    let words = [...command.words];
    for (;;) {
      const head = words[0];
      if (head === undefined) break;
      if (ASSIGNMENT.test(head) && disablesHistory(head)) {
        out.findings.push({ pattern_id: 'audit.disable', severity: 'critical', summary: `shell history turned off (${head.slice(0, head.indexOf('='))})`, command: command.words });
      }
      if (RESERVED_PREFIX.has(head) || ASSIGNMENT.test(head)) words = words.slice(1);
      else if (head === 'function') words = words.slice(2);
      else break;
    }
    const fed: string | null = previous !== null && previous.pipeline === command.pipeline ? previous.text : null;
    const stdin = command.stdin ?? fed;
    previous = { pipeline: command.pipeline, text: [words.slice(1).join(' '), command.stdin ?? fed ?? ''].filter((t) => t.length > 0).join('\n') };
    for (const redirect of command.redirects) {
      const toFile = WRITE_REDIRECTIONS.has(redirect.op) || (redirect.op === '>&' && !/^(?:[0-9]+|-)$/.test(redirect.target));
      if (toFile) addTarget(out, redirect.target, known, command.words);
    }
    const head = words[0];
    if (head === undefined || HEADER_WORDS.has(head)) continue;
    if (head === 'cd' || head === 'pushd' || head === 'popd') {
      known = false;
      continue;
    }
    analyzeArgv(words, depth + 1, known, stdin, true, out);
  }
}

function finish(out: Collector): CommandAnalysis {
  return { destructive: out.findings.length > 0, findings: out.findings, write_targets: out.targets, programs: [...out.programs] };
}

/** Analyzes an argv (executed without a shell, as `execute_command` runs it). */
export function analyzeCommand(argv: readonly string[]): CommandAnalysis {
  const out: Collector = { findings: [], targets: [], programs: new Set() };
  analyzeArgv(argv, 0, true, null, false, out);
  return finish(out);
}

/** Analyzes a shell script, as `sh -c` would run it. */
export function analyzeShellScript(script: string): CommandAnalysis {
  const out: Collector = { findings: [], targets: [], programs: new Set() };
  analyzeScript(script, 0, true, out);
  return finish(out);
}

/** True when the argv runs anything in `DESTRUCTIVE_PATTERNS` (or something that cannot be seen into). */
export function isDestructiveCommand(argv: readonly string[]): boolean {
  return analyzeCommand(argv).destructive;
}
