import { z } from 'zod';
import { CONTRACT_NAMES, CONTRACTS, type ContractName } from './contracts.js';

/** `ActionRequest` → `action-request.schema.json`: the file under docs/schemas. */
export function jsonSchemaFileName(name: ContractName): string {
  return `${name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}.schema.json`;
}

/** The JSON Schema (draft 2020-12) of one contract, as zod generates it. */
export function jsonSchemaOf(name: ContractName): Record<string, unknown> {
  const schema = z.toJSONSchema(CONTRACTS[name], { target: 'draft-2020-12', unrepresentable: 'throw' }) as Record<string, unknown>;
  return { ...schema, title: name };
}

export interface JsonSchemaDocument {
  readonly contract: ContractName;
  /** File name under docs/schemas. */
  readonly file: string;
  /** File content: two-space indented JSON and a final newline. */
  readonly text: string;
}

/** Every contract's JSON Schema document, in registry order: what docs/schemas must hold. */
export function jsonSchemaDocuments(): JsonSchemaDocument[] {
  return CONTRACT_NAMES.map((contract) => ({
    contract,
    file: jsonSchemaFileName(contract),
    text: `${JSON.stringify(jsonSchemaOf(contract), null, 2)}\n`,
  }));
}
