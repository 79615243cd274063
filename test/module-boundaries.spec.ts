import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// The boundary rules are only worth having if they refuse something: each case
// lints a small source text as if it lived at `file` and expects the rule to fire.
const workspaceRoot = fileURLToPath(new URL('..', import.meta.url));

interface Case {
  note: string;
  file: string;
  code: string;
  want: string | null;
}

const cases: Case[] = [
  {
    note: 'contracts stay pure: no bus client',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import { jetstream } from '@nats-io/jetstream';\nexport const probe = jetstream;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'contracts stay pure: no NestJS',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'contracts stay pure: no file system',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n",
    want: 'no-restricted-imports',
  },
  {
    note: 'contracts stay pure: no bare built-in alias either',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import { createHash } from 'crypto';\nexport const probe = createHash;\n",
    want: 'no-restricted-imports',
  },
  {
    note: 'contracts depend on zod and nothing else from npm',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import protobuf from 'protobufjs';\nexport const probe = protobuf;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'contracts may use zod',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: "import { z } from 'zod';\nexport const probe = z.string();\n",
    want: null,
  },
  {
    note: 'a utility library does not reach up into infrastructure',
    file: 'libs/crypto/src/boundary-probe.ts',
    code: "import { EventStore } from '@writ/eventstore';\nexport const probe = EventStore;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'production code never depends on test helpers',
    file: 'libs/eventstore/src/boundary-probe.ts',
    code: "import { waitFor } from '@writ/testing';\nexport const probe = waitFor;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'tests may use the real-stack helpers',
    file: 'libs/eventstore/src/boundary-probe.int.spec.ts',
    code: "import { waitFor } from '@writ/testing';\nexport const probe = waitFor;\n",
    want: null,
  },
  {
    note: 'deterministic code takes time from its caller',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: 'export const probe = () => Date.now();\n',
    want: 'no-restricted-syntax',
  },
  {
    note: 'deterministic code takes randomness from its caller',
    file: 'libs/contracts/src/boundary-probe.ts',
    code: 'export const probe = () => Math.random();\n',
    want: 'no-restricted-syntax',
  },
  {
    note: 'the published agent SDK depends on no private library but the contracts it vendors',
    file: 'libs/agent/src/boundary-probe.ts',
    code: "import { signJws } from '@writ/crypto';\nexport const probe = signJws;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'the agent SDK reaches the contracts only through its seam (the module its build vendors)',
    file: 'libs/agent/src/boundary-probe.ts',
    code: "import { ActionRequest } from '@writ/contracts';\nexport const probe = ActionRequest;\n",
    want: 'no-restricted-imports',
  },
  {
    note: 'the agent SDK may use its contracts seam and public npm packages',
    file: 'libs/agent/src/boundary-probe.ts',
    code: "import { CompactSign } from 'jose';\nimport { ActionRequest } from './contracts.js';\nexport const probe = [CompactSign, ActionRequest];\n",
    want: null,
  },
  {
    note: 'the agent SDK stays free of server frameworks',
    file: 'libs/agent/src/boundary-probe.ts',
    code: "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'a service never imports another service',
    file: 'services/policy/src/boundary-probe.ts',
    code: "import { receiptService } from '@writ/receipt';\nexport const probe = receiptService;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'the CLI stays light: it does not load the services (writ serve --all runs apps/serve)',
    file: 'apps/cli/src/boundary-probe.ts',
    code: "import { policyService } from '@writ/policy';\nexport const probe = policyService;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'the one-process app composes the services',
    file: 'apps/serve/src/boundary-probe.ts',
    code: "import { policyService } from '@writ/policy';\nimport { startServices } from '@writ/runtime/nest';\nexport const probe = [policyService, startServices];\n",
    want: null,
  },
  {
    note: 'no service depends on the one-process app',
    file: 'services/policy/src/boundary-probe.ts',
    code: "import { WRIT_SERVICES_IN_START_ORDER } from '@writ/serve';\nexport const probe = WRIT_SERVICES_IN_START_ORDER;\n",
    want: '@nx/enforce-module-boundaries',
  },
  {
    note: 'infrastructure may use contracts and crypto',
    file: 'libs/eventstore/src/boundary-probe.ts',
    code: "import { canonicalJson } from '@writ/crypto';\nimport { EventEnvelope } from '@writ/contracts';\nexport const probe = [canonicalJson, EventEnvelope];\n",
    want: null,
  },
];

describe('module boundaries (eslint.config.mjs)', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = new ESLint({ cwd: workspaceRoot });
  });

  it.each(cases)('$note', async ({ file, code, want }) => {
    // given source text placed in a project, when it is linted
    const [result] = await eslint.lintText(code, { filePath: `${workspaceRoot}${file}` });
    const rules = (result?.messages ?? []).map((m) => m.ruleId);
    // then the boundary rule fires exactly when the case says it must
    if (want === null) expect(rules).toEqual([]);
    else expect(rules).toContain(want);
  });
});
