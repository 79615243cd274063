import { generateEd25519Key } from '@writ/crypto';
import { EventStore, eventSealer } from '@writ/eventstore';
import { registerServicePrincipal, serviceAuthorship } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll } from 'vitest';
import { createRig, http, type Rig } from './projection-rig.js';
import type { ProjectionApp } from '../src/bootstrap.js';

/**
 * A rig whose projection reads the log as in a deployment (scripts/writ-up.sh,
 * `WRIT_AUTHORSHIP=enforce`: every event's seal checked against
 * EVENT_AUTHORSHIP), started before all and disposed after all.
 */
export function enforcedRig(): { rig(): Rig; app(): ProjectionApp } {
  let rig: Rig | undefined;
  let app: ProjectionApp | undefined;
  const before = process.env['WRIT_AUTHORSHIP'];
  beforeAll(async () => {
    process.env['WRIT_AUTHORSHIP'] = 'enforce';
    rig = await createRig();
    app = await rig.start();
  });
  afterAll(async () => {
    await rig?.dispose();
    if (before === undefined) delete process.env['WRIT_AUTHORSHIP'];
    else process.env['WRIT_AUTHORSHIP'] = before;
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('enforcedRig: the rig starts in beforeAll');
    return value;
  };
  return { rig: () => started(rig), app: () => started(app) };
}

/**
 * A store on the rig's log as a Writ service opens it: sealing as `principalId`, its key registered on its own
 * subject, and reading with authorship checked (so it appends after the last proven event, as a service does);
 * `checked: false` is a forger's client, which checks nothing it appends.
 */
export async function sealedStore(rig: Rig, principalId: string, options: { readonly checked: boolean } = { checked: true }): Promise<EventStore> {
  const authorship = options.checked ? serviceAuthorship().store : undefined;
  const config = { stream: rig.config.streams.events, subjectPrefix: rig.config.subjects.eventsPrefix, maxBytes: rig.config.streams.eventsMaxBytes };
  const store = await EventStore.open(rig.nc, config, authorship === undefined ? {} : { authorship });
  const key = await generateEd25519Key({ kid: `${principalId}-${uniqueName('k')}` });
  store.sealWith(eventSealer(principalId, key));
  await registerServicePrincipal(store, { principalId, displayName: principalId, key });
  return store;
}

/** Waits until the projection's status counts at least `count` messages quarantined QUARANTINE_AUTHOR_UNPROVEN; resolves with the count. */
export async function authorUnprovenCount(app: ProjectionApp, count: number): Promise<number | undefined> {
  const quarantined = await waitFor(
    async () => {
      const { body } = await http(app, '/v1/projections/status');
      const found = body['quarantined'] as { by_reason?: Record<string, number> } | undefined;
      return (found?.by_reason?.['QUARANTINE_AUTHOR_UNPROVEN'] ?? 0) >= count ? found : undefined;
    },
    { what: `${count} QUARANTINE_AUTHOR_UNPROVEN record(s)` },
  );
  return quarantined?.by_reason?.['QUARANTINE_AUTHOR_UNPROVEN'];
}
