import { describe, expect, it } from 'vitest';
import { sharedProcessEnvironments } from './shared-process-environment.js';

const SERVICES = ['projection', 'ingress', 'policy'];
/** What writ.env gives an operator's shell: the operator's own credential, which may do anything on the bus. */
const OPERATOR_SHELL = { WRIT_HOME: '/srv/writ', WRIT_NATS_URL: 'nats://127.0.0.1:4223', WRIT_NATS_CREDS: '/srv/writ/creds/operator.creds', WRIT_AUTHORSHIP: 'enforce' };

describe('sharedProcessEnvironments: each service of one process gets its own share of the environment', () => {
  it("given the operator's shell, then each service connects with its own credential under WRIT_HOME, never the operator's, and shares the rest", () => {
    const envs = sharedProcessEnvironments(SERVICES, OPERATOR_SHELL);
    expect(envs.get('projection')).toMatchObject({ WRIT_NATS_CREDS: '/srv/writ/creds/projection.creds', WRIT_NATS_URL: 'nats://127.0.0.1:4223', WRIT_AUTHORSHIP: 'enforce' });
    expect(envs.get('policy')?.['WRIT_NATS_CREDS']).toBe('/srv/writ/creds/policy.creds');
    expect([...envs.values()].map((env) => env['WRIT_NATS_CREDS'])).not.toContain('/srv/writ/creds/operator.creds');
  });

  it('given a shared port, consumer credential, nkey, user, token or enrollment, then no service inherits it', () => {
    const env = sharedProcessEnvironments(SERVICES, {
      ...OPERATOR_SHELL,
      WRIT_HTTP_PORT: '8080',
      WRIT_NATS_CONSUMER_CREDS: '/srv/writ/creds/operator.consumer.creds',
      WRIT_NATS_NKEY: '/srv/writ/operator.nk',
      WRIT_NATS_USER: 'admin',
      WRIT_NATS_PASS: 'pw',
      WRIT_NATS_TOKEN: 't',
      WRIT_SERVICE_ENROLLMENT: '/srv/writ/services/writ-policy.enrollment.jws',
    }).get('ingress');
    for (const name of ['WRIT_HTTP_PORT', 'WRIT_NATS_CONSUMER_CREDS', 'WRIT_NATS_NKEY', 'WRIT_NATS_USER', 'WRIT_NATS_PASS', 'WRIT_NATS_TOKEN', 'WRIT_SERVICE_ENROLLMENT']) expect(env, name).not.toHaveProperty(name);
  });

  it('given WRIT_HTTP_PORT_BASE, then the services take consecutive ports in their order', () => {
    const envs = sharedProcessEnvironments(SERVICES, { ...OPERATOR_SHELL, WRIT_HTTP_PORT_BASE: '9620' });
    expect(SERVICES.map((service) => envs.get(service)?.['WRIT_HTTP_PORT'])).toEqual(['9620', '9621', '9622']);
  });

  it('given WRIT_SERVE_<SERVICE>__<VARIABLE>, then that service alone gets it, over the shared value and its defaults; WRIT_SERVE_CREDS_DIR moves every credential', () => {
    const envs = sharedProcessEnvironments(SERVICES, {
      ...OPERATOR_SHELL,
      WRIT_SERVE_CREDS_DIR: '/run/creds',
      WRIT_SERVE_PROJECTION__WRIT_PG_URL: 'postgres://projection@db/writ',
      WRIT_SERVE_POLICY__WRIT_NATS_URL: 'nats://other:4223',
    });
    expect(envs.get('projection')).toMatchObject({ WRIT_PG_URL: 'postgres://projection@db/writ', WRIT_NATS_CREDS: '/run/creds/projection.creds' });
    expect(envs.get('ingress')).not.toHaveProperty('WRIT_PG_URL');
    expect(envs.get('policy')?.['WRIT_NATS_URL']).toBe('nats://other:4223');
    expect(envs.get('ingress')?.['WRIT_NATS_URL']).toBe('nats://127.0.0.1:4223');
    expect(envs.get('ingress')).not.toHaveProperty('WRIT_SERVE_CREDS_DIR');
  });

  it('given two services named to the same credential, then RUNTIME_CONFIG_INVALID names both', () => {
    const shared = { ...OPERATOR_SHELL, WRIT_SERVE_POLICY__WRIT_NATS_CREDS: '/srv/writ/creds/ingress.creds' };
    expect(() => sharedProcessEnvironments(SERVICES, shared)).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringMatching(/ingress and policy would connect with the same WRIT_NATS_CREDS/) }));
  });

  it('given no WRIT_HOME nor credential directory, then RUNTIME_CONFIG_INVALID says where each credential is looked for', () => {
    expect(() => sharedProcessEnvironments(SERVICES, { WRIT_NATS_CREDS: '/srv/writ/creds/operator.creds' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringContaining('WRIT_SERVE_CREDS_DIR') }));
  });

  it('given a port base the services would not fit above, then RUNTIME_CONFIG_INVALID', () => {
    expect(() => sharedProcessEnvironments(SERVICES, { ...OPERATOR_SHELL, WRIT_HTTP_PORT_BASE: '65534' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID' }));
    expect(() => sharedProcessEnvironments(SERVICES, { ...OPERATOR_SHELL, WRIT_HTTP_PORT_BASE: 'eighty' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID' }));
  });
});
