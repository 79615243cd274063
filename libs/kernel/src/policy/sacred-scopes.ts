/**
 * The Sacred Scopes of OmegaOS "Scope & Safety" (seed 003) as path globs
 * relative to the workspace. A glob here is matched against whole normalized
 * paths (`shared/glob.ts`): `**` spans segments, `*` and `?` stay inside one.
 *
 * Secret paths are never read nor written (secret values stay out of model
 * context, Hermit 6.3). Sacred paths are never written unless the profile AND
 * the task both name the path as an exception, and even then only inside the
 * task's files_owned.
 */

/** Paths whose content is secret: never read into model context, never written. */
export const DEFAULT_SECRET_PATHS: readonly string[] = Object.freeze([
  '**/.env',
  '**/.env.*',
  '**/.ssh/**',
  '**/.aws/**',
  '**/.gnupg/**',
  '**/*.pem',
  '**/*.key',
  '**/id_rsa*',
  '**/id_ed25519*',
  '**/credentials.json',
  '**/.netrc',
  '**/.npmrc',
  '**/secrets/**',
]);

function freezeGroups<G extends Record<string, string[]>>(groups: G): { readonly [K in keyof G]: readonly string[] } {
  for (const list of Object.values(groups)) Object.freeze(list);
  return Object.freeze(groups);
}

/**
 * Sacred Scopes by the seed's table rows. The seed protects only the
 * `dependencies` block of package.json; a path rule cannot see blocks, so the
 * whole manifest (and every lock file) is sacred. Migrations are sacred
 * whether or not they are committed yet: the kernel cannot see git history,
 * so even a new migration needs the exception pair.
 */
export const SACRED_SCOPE_GROUPS = freezeGroups({
  credentials: ['**/credentials.json', '**/credentials', '**/.credentials*', '**/.aws/**', '**/.ssh/**', '**/.gnupg/**', '**/.netrc', '**/.npmrc', '**/.pypirc', '**/*.pem', '**/*.key', '**/id_rsa*', '**/id_ed25519*'],
  environment_files: ['**/.env', '**/.env.*', '**/.envrc'],
  secrets_dirs: ['**/secrets/**', '**/.secrets/**'],
  auth: ['**/auth/**', '**/clerk/**', '**/next-auth/**', '**/oauth/**', '**/*oauth*', '**/*oauth*/**', '**/*OAuth*', '**/*OAuth*/**'],
  billing: ['**/billing/**', '**/stripe/**', '**/paddle/**', '**/lemonsqueezy/**', '**/lemon-squeezy/**', '**/subscriptions/**', '**/payments/**'],
  dependency_manifests: [
    '**/package.json',
    '**/package-lock.json',
    '**/npm-shrinkwrap.json',
    '**/yarn.lock',
    '**/pnpm-lock.yaml',
    '**/pnpm-workspace.yaml',
    '**/bun.lock',
    '**/bun.lockb',
    '**/deno.lock',
    '**/go.mod',
    '**/go.sum',
    '**/go.work',
    '**/go.work.sum',
    '**/Cargo.toml',
    '**/Cargo.lock',
    '**/requirements*.txt',
    '**/constraints*.txt',
    '**/pyproject.toml',
    '**/poetry.lock',
    '**/Pipfile',
    '**/Pipfile.lock',
    '**/uv.lock',
    '**/setup.py',
    '**/setup.cfg',
    '**/Gemfile',
    '**/Gemfile.lock',
    '**/*.gemspec',
    '**/composer.json',
    '**/composer.lock',
    '**/pom.xml',
    '**/build.gradle',
    '**/build.gradle.kts',
    '**/settings.gradle',
    '**/settings.gradle.kts',
    '**/gradle.lockfile',
    '**/mix.exs',
    '**/mix.lock',
    '**/pubspec.yaml',
    '**/pubspec.lock',
    '**/Package.swift',
    '**/Package.resolved',
    '**/packages.lock.json',
    '**/Directory.Packages.props',
  ],
  git_config: ['**/.git', '**/.git/**', '**/.gitconfig', '**/.gitmodules'],
  migrations: ['**/migrations/**', '**/db/migrate/**', '**/alembic/versions/**'],
});

export type SacredScopeGroup = keyof typeof SACRED_SCOPE_GROUPS;

/** Paths never written by an agent, even inside files_owned, unless both exceptions name them (the secret paths are included). */
export const DEFAULT_SACRED_PATHS: readonly string[] = Object.freeze([...new Set([...DEFAULT_SECRET_PATHS, ...Object.values(SACRED_SCOPE_GROUPS).flat()])]);
