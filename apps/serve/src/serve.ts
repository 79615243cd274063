import 'reflect-metadata';
import { approvalService } from '@writ/approval';
import { executorService } from '@writ/executor';
import { ingressService } from '@writ/ingress';
import { orchestratorService } from '@writ/orchestrator';
import { policyService } from '@writ/policy';
import { projectionService } from '@writ/projection';
import { receiptService } from '@writ/receipt';
import type { ServiceDefinition } from '@writ/runtime/nest';

/**
 * Every Writ service, in start order: the order scripts/writ-up.sh gives their HTTP ports
 * (`WRIT_HTTP_PORT_BASE` + index). The projection first: its read API answers while the
 * others start.
 */
export const WRIT_SERVICES_IN_START_ORDER: readonly ServiceDefinition<unknown>[] = Object.freeze([
  projectionService,
  ingressService,
  orchestratorService,
  policyService,
  approvalService,
  executorService,
  receiptService,
]);

export { runServicesProcess, startServices, type SharedProcessServices } from '@writ/runtime/nest';
