import { describe, expect, it } from 'vitest';
import { serviceAuthorship } from './service-authorship.js';

describe('serviceAuthorship: what a service checks and where its sealing key lives, from its environment', () => {
  it('given no setting, then nothing is checked and keys live under /var/lib/writ/keys', () => {
    const authorship = serviceAuthorship({});
    expect(authorship.enforce).toBe(false);
    expect(authorship.store).toBeUndefined();
    expect(authorship.sealKeyFile('writ-policy')).toBe('/var/lib/writ/keys/writ-policy.seal.jwk.json');
  });

  it('given WRIT_AUTHORSHIP=enforce and renamed principals, then the store checks authors against every service principal', () => {
    const authorship = serviceAuthorship({ WRIT_AUTHORSHIP: 'enforce', WRIT_HOME: '/home/w', WRIT_POLICY_PRINCIPAL_ID: 'pol-2' });
    expect(authorship.enforce).toBe(true);
    expect(authorship.store?.servicePrincipals).toMatchObject({ policy: 'pol-2', approval: 'writ-approval', ingress: 'ingress' });
    expect(authorship.sealKeyFile('pol-2')).toBe('/home/w/keys/pol-2.seal.jwk.json');
  });

  it('given WRIT_SEAL_KEY_DIR, then it wins over WRIT_HOME', () => {
    expect(serviceAuthorship({ WRIT_HOME: '/home/w', WRIT_SEAL_KEY_DIR: '/keys' }).sealKeyFile('ingress')).toBe('/keys/ingress.seal.jwk.json');
  });

  it('given an unknown mode, then RUNTIME_CONFIG_INVALID names the variable', () => {
    expect(() => serviceAuthorship({ WRIT_AUTHORSHIP: 'sometimes' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringContaining('WRIT_AUTHORSHIP') }));
  });
});
