import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// docker-compose.yml must describe the same stack the repository builds: one
// container per service from the one service image (scripts/build-images.sh: no
// registry), each given only its own bus credential, wired to NATS and Postgres, the
// executor with the Docker socket. Checked structurally here, by docker-compose itself
// when installed (scripts/stack-up.sh installs it), and for real by .ci/run
// (scripts/compose-up.sh, then the conformance agent against it).
const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(`${root}docker-compose.yml`, 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, { image?: string; build?: unknown; environment?: Record<string, string>; volumes?: string[]; ports?: string[]; user?: string; network_mode?: string }>;
};
const serviceNames = readdirSync(`${root}services`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(`${root}services/${entry.name}/package.json`))
  .map((entry) => entry.name);
const ENROLLMENT: Record<string, string> = { ingress: 'ingress' };

describe('docker-compose.yml', () => {
  it('given the services in the repository, then each runs from the service image built here, with only its own credential and enrollment', () => {
    expect(serviceNames.sort()).toEqual(['approval', 'executor', 'ingress', 'orchestrator', 'policy', 'projection', 'receipt']);
    for (const name of serviceNames) {
      const service = compose.services[name];
      expect(service, name).toBeDefined();
      expect(service?.image, name).toMatch(/^writ\/service:/);
      expect(service?.build, `${name} is built by scripts/build-images.sh, not by compose`).toBeUndefined();
      expect(service?.environment?.['SERVICE'], name).toBe(name);
      expect(service?.environment?.['WRIT_NATS_URL'], name).toMatch(name === 'executor' ? /^nats:\/\/127\.0\.0\.1:/ : /^nats:\/\/nats:/);
      expect(service?.environment?.['WRIT_NATS_CREDS'], name).toBe('/run/writ/bus.creds');
      const volumes = service?.volumes ?? [];
      expect(volumes, name).toContain(`\${WRIT_HOME}/creds/${name}.creds:/run/writ/bus.creds:ro`);
      // and beside it, where the bus looks for it, the service's own consumer credential
      expect(volumes, name).toContain(`\${WRIT_HOME}/creds/${name}.consumer.creds:/run/writ/bus.consumer.creds:ro`);
      expect(volumes, name).toContain(`\${WRIT_HOME}/services/${ENROLLMENT[name] ?? `writ-${name}`}.enrollment.jws:/run/writ/enrollment.jws:ro`);
      // Nothing else of the deployment's directory: not another party's credential, not the operator's key.
      expect(volumes.filter((v) => v.startsWith('${WRIT_HOME}') && !v.endsWith(':ro')), name).toEqual([]);
      expect(volumes.filter((v) => /\/creds\//.test(v)).map((v) => v.split(':')[0]), name).toEqual([`\${WRIT_HOME}/creds/${name}.creds`, `\${WRIT_HOME}/creds/${name}.consumer.creds`]);
      expect(volumes.some((v) => /operator|dashboard|\/keys\/|^\$\{WRIT_HOME\}:/.test(v.split(':')[0] ?? '')), name).toBe(false);
    }
    // No image comes from a registry: every one is built here.
    for (const [name, service] of Object.entries(compose.services)) expect(service.image, name).toMatch(/^writ\/(service|nats|postgres):/);
  });

  it('gives the executor the Docker socket and the cells root at the same path inside and out', () => {
    const volumes = compose.services['executor']?.volumes ?? [];
    expect(volumes).toContain('/var/run/docker.sock:/var/run/docker.sock');
    expect(volumes).toContain('/var/lib/writ/cells:/var/lib/writ/cells');
    for (const name of serviceNames.filter((n) => n !== 'executor')) {
      expect((compose.services[name]?.volumes ?? []).some((v) => v.includes('docker.sock')), name).toBe(false);
    }
  });

  it('publishes on loopback only, runs the executor alone as root and on the host network, and holds no secret', () => {
    const published = Object.values(compose.services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const port of published) expect(port).toMatch(/^127\.0\.0\.1:/);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.user === '0' || service.user === 'root', name).toBe(name === 'executor');
      expect(service.network_mode === 'host', name).toBe(name === 'executor');
    }
    // A key, or a password given as a value (a path to its file is how every one is given).
    expect(composeText).not.toMatch(/PRIVATE KEY|"d"\s*:|^\s*[\w-]*password[\w-]*\s*[:=]\s*(?![/$])\S+/im);
  });

  it('runs Postgres on a password file (the writ/postgres entrypoint accepts scram-sha-256 only), and the projection logs in as its own role with a password file, no password in any URL', () => {
    const postgres = compose.services['postgres']?.environment ?? {};
    expect(postgres['POSTGRES_PASSWORD_FILE']).toBe('/run/writ/admin.password');
    expect(readFileSync(`${root}deploy/postgres/entrypoint.sh`, 'utf8')).toMatch(/--auth-local=scram-sha-256 --auth-host=scram-sha-256/);
    expect(composeText).not.toMatch(/auth[\w-]*\s*[:=]\s*trust\b/i);
    // The superuser's password reaches Postgres and the one-shot that makes the roles, no service.
    for (const [name, service] of Object.entries(compose.services)) {
      expect((service.volumes ?? []).some((v) => v.includes('admin.password')), name).toBe(name === 'postgres' || name === 'pg-roles');
    }
    const projection = compose.services['projection']?.environment ?? {};
    expect(projection['WRIT_PG_URL']).toBe('postgres://writ_projection@postgres:5432/writ');
    expect(projection['WRIT_PG_PASSWORD_FILE']).toBe('/run/writ/projection.password');
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
    // The deployment's directory comes from `. <home>/writ.env` (scripts/compose-up.sh); any absolute path will do here.
    execFileSync(tool as string, args, { cwd: root, stdio: 'pipe', env: { ...process.env, WRIT_HOME: '/var/lib/writ-compose-check' } });
  });
});
