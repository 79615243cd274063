import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// docker-compose.yml must describe the same stack the repository builds: one
// container per service, wired to NATS and Postgres, the executor with the Docker
// socket. Checked structurally here, and by docker-compose itself when installed
// (scripts/stack-up.sh installs it, so CI always runs that check).
const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(`${root}docker-compose.yml`, 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, { build?: { dockerfile: string; args: Record<string, string> }; environment?: Record<string, string>; volumes?: string[]; ports?: string[]; user?: string; secrets?: string[] }>;
  secrets?: Record<string, { file?: string }>;
};
const serviceNames = readdirSync(`${root}services`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${root}services/${entry.name}/package.json`))
  .map((entry) => entry.name);

describe('docker-compose.yml', () => {
  it('given the services in the repository, then each has a container built from its own code', () => {
    expect(serviceNames.sort()).toEqual(['approval', 'executor', 'ingress', 'orchestrator', 'policy', 'projection', 'receipt']);
    for (const name of serviceNames) {
      const service = compose.services[name];
      expect(service, name).toBeDefined();
      expect(service?.build?.args['SERVICE'], name).toBe(name);
      expect(existsSync(`${root}${service?.build?.dockerfile}`), `${name}: ${service?.build?.dockerfile}`).toBe(true);
      expect(service?.environment?.['WRIT_NATS_URL'], name).toBe('nats://nats:4222');
    }
  });

  it('gives the executor the Docker socket and the cells root at the same path inside and out', () => {
    const volumes = compose.services['executor']?.volumes ?? [];
    expect(volumes).toContain('/var/run/docker.sock:/var/run/docker.sock');
    expect(volumes).toContain('/var/lib/writ/cells:/var/lib/writ/cells');
    for (const name of serviceNames.filter((n) => n !== 'executor')) {
      expect((compose.services[name]?.volumes ?? []).some((v) => v.includes('docker.sock')), name).toBe(false);
    }
  });

  it('publishes only the API and NATS on loopback, and holds no secret', () => {
    const published = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name}=${p}`));
    expect(published.sort()).toEqual(['nats=127.0.0.1:4222:4222', 'projection=127.0.0.1:8080:8080']);
    expect(composeText).not.toMatch(/PRIVATE KEY|"d"\s*:|password\s*[:=]\s*\S+/i);
  });

  it('runs Postgres with scram-sha-256 only, and the projection logs in as its own role with a password file, no password in any URL', () => {
    const postgres = compose.services['postgres']?.environment ?? {};
    expect(postgres['POSTGRES_HOST_AUTH_METHOD']).toBe('scram-sha-256');
    expect(postgres['POSTGRES_INITDB_ARGS']).toBe('--auth-host=scram-sha-256 --auth-local=scram-sha-256');
    expect(postgres['POSTGRES_PASSWORD_FILE']).toBe('/run/secrets/writ_pg_admin');
    expect(composeText).not.toMatch(/\btrust\b/);
    // The secrets are the files writ init generated, not values in this file.
    expect(compose.secrets).toEqual({ writ_pg_admin: { file: './var/writ/pg/admin.password' }, writ_pg_projection: { file: './var/writ/pg/projection.password' } });
    const projection = compose.services['projection']?.environment ?? {};
    expect(projection['WRIT_PG_URL']).toBe('postgres://writ_projection@postgres:5432/writ');
    expect(projection['WRIT_PG_PASSWORD_FILE']).toBe('/run/writ-pg/projection.password');
    expect(compose.services['projection']?.secrets ?? []).not.toContain('writ_pg_admin');
    for (const [name, service] of Object.entries(compose.services)) {
      for (const value of Object.values(service.environment ?? {})) expect(String(value), name).not.toMatch(/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/);
    }
    expect(existsSync(`${root}deploy/postgres/writ-roles.sh`)).toBe(true);
  });

  it('is accepted by docker-compose itself', () => {
    const tool = ['docker-compose', 'docker'].find((bin) => {
      try {
        execFileSync(bin, bin === 'docker' ? ['compose', 'version'] : ['version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    });
    expect(tool, 'docker-compose is installed by scripts/stack-up.sh').toBeDefined();
    const args = tool === 'docker' ? ['compose', '-f', 'docker-compose.yml', 'config', '-q'] : ['-f', 'docker-compose.yml', 'config', '-q'];
    execFileSync(tool as string, args, { cwd: root, stdio: 'pipe' });
  });
});
