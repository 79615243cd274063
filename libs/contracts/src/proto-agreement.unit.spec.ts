import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { CONTRACTS, jsonSchemaOf, type ContractName } from './index.js';

// Checks that proto/writ/v1/*.proto mirrors the zod contracts under the
// mapping convention of proto/README.md. zod is walked through the JSON
// Schema it generates (the same documents published in docs/schemas).

const PROTO_DIR = new URL('../../../proto/writ/v1/', import.meta.url);

/** Contract → the proto message that mirrors it. */
const MIRRORS: Partial<Record<ContractName, string>> = {
  ActionRequest: 'writ.v1.ActionRequest',
  EventEnvelope: 'writ.v1.EventEnvelope',
  CapabilityGrantClaims: 'writ.v1.CapabilityGrantClaims',
  Receipt: 'writ.v1.Receipt',
  PolicyResult: 'writ.v1.PolicyResult',
  Approval: 'writ.v1.Approval',
  ApprovalResolution: 'writ.v1.ApprovalResolution',
};

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  $defs?: Record<string, JsonSchema>;
};

type Problem = 'missing_in_proto' | 'missing_in_zod' | 'type' | 'cardinality' | 'optionality' | 'unsupported';

/** One disagreement between a zod contract and its proto mirror. */
export interface Disagreement {
  readonly path: string;
  readonly problem: Problem;
  readonly zod?: string;
  readonly proto?: string;
}

/** What a JSON Schema node maps to under the convention. */
type Shape =
  | { readonly kind: 'scalar'; readonly proto: 'string' | 'bool' | 'double' | 'int32' | 'int64' }
  | { readonly kind: 'struct' }
  | { readonly kind: 'value' }
  | { readonly kind: 'message'; readonly node: JsonSchema }
  | { readonly kind: 'map'; readonly value: Shape }
  | { readonly kind: 'array'; readonly items: Shape }
  | { readonly kind: 'unsupported'; readonly why: string };

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const STRUCT = '.google.protobuf.Struct';
const VALUE = '.google.protobuf.Value';

function describeShape(shape: Shape): string {
  switch (shape.kind) {
    case 'scalar':
      return shape.proto;
    case 'struct':
      return 'google.protobuf.Struct';
    case 'value':
      return 'google.protobuf.Value';
    case 'message':
      return 'message';
    case 'map':
      return `map<string, ${describeShape(shape.value)}>`;
    case 'array':
      return `repeated ${describeShape(shape.items)}`;
    case 'unsupported':
      return shape.why;
  }
}

/** The key type of a map field (protobufjs types map fields apart from `Field`). */
function keyTypeOf(field: protobuf.Field): string | undefined {
  return (field as unknown as { keyType?: string }).keyType;
}

function describeField(field: protobuf.Field): string {
  const type = field.resolvedType ? field.resolvedType.fullName.replace(/^\./, '') : field.type;
  if (field.map) return `map<${keyTypeOf(field)}, ${type}>`;
  if (field.repeated) return `repeated ${type}`;
  return type;
}

class Walker {
  readonly found: Disagreement[] = [];
  constructor(private readonly defs: Record<string, JsonSchema>) {}

  private deref(node: JsonSchema): JsonSchema {
    const name = node.$ref?.replace('#/$defs/', '');
    return name !== undefined && name !== 'JsonValue' && this.defs[name] ? this.deref(this.defs[name]) : node;
  }

  private unwrapNullable(node: JsonSchema): { node: JsonSchema; nullable: boolean } {
    const options = node.anyOf;
    if (options && options.length === 2 && options.some((option) => option.type === 'null')) {
      return { node: this.deref(options.find((option) => option.type !== 'null') as JsonSchema), nullable: true };
    }
    return { node, nullable: false };
  }

  private shapeOf(raw: JsonSchema): Shape {
    const node = this.deref(raw);
    if (node.$ref === '#/$defs/JsonValue') return { kind: 'value' };
    if (node.anyOf || node.oneOf) return { kind: 'unsupported', why: 'union' };
    const type = Array.isArray(node.type) ? undefined : node.type;
    switch (type) {
      case 'string':
        return { kind: 'scalar', proto: 'string' };
      case 'boolean':
        return { kind: 'scalar', proto: 'bool' };
      case 'number':
        return { kind: 'scalar', proto: 'double' };
      case 'integer': {
        const min = node.minimum ?? (node.exclusiveMinimum === undefined ? -Infinity : node.exclusiveMinimum + 1);
        const max = node.maximum ?? (node.exclusiveMaximum === undefined ? Infinity : node.exclusiveMaximum - 1);
        return { kind: 'scalar', proto: min >= INT32_MIN && max <= INT32_MAX ? 'int32' : 'int64' };
      }
      case 'array':
        return node.items ? { kind: 'array', items: this.shapeOf(node.items) } : { kind: 'unsupported', why: 'untyped array' };
      case 'object': {
        if (node.properties) return { kind: 'message', node };
        const values = node.additionalProperties;
        if (typeof values !== 'object') return { kind: 'unsupported', why: 'empty object' };
        const valueShape = Object.keys(values).length === 0 ? ({ kind: 'value' } as const) : this.shapeOf(values);
        if (valueShape.kind === 'value') return { kind: 'struct' };
        return { kind: 'map', value: valueShape };
      }
      default:
        if (node.enum?.every((value) => typeof value === 'string') || typeof node.const === 'string') return { kind: 'scalar', proto: 'string' };
        return { kind: 'unsupported', why: `JSON Schema type ${JSON.stringify(node.type)}` };
    }
  }

  private report(disagreement: Disagreement): void {
    this.found.push(disagreement);
  }

  /** Compares one non-repeated value's type: scalar kind, well-known type or nested message. */
  private compareValue(path: string, shape: Shape, field: protobuf.Field): void {
    const resolved = field.resolvedType?.fullName;
    switch (shape.kind) {
      case 'scalar':
        if (field.resolvedType || field.type !== shape.proto) this.report({ path, problem: 'type', zod: shape.proto, proto: describeField(field) });
        return;
      case 'struct':
      case 'value': {
        const want = shape.kind === 'struct' ? STRUCT : VALUE;
        if (resolved !== want) this.report({ path, problem: 'type', zod: describeShape(shape), proto: describeField(field) });
        return;
      }
      case 'message':
        if (!(field.resolvedType instanceof protobuf.Type) || resolved === STRUCT || resolved === VALUE) {
          this.report({ path, problem: 'type', zod: 'message', proto: describeField(field) });
          return;
        }
        this.compareMessage(`${path}.`, shape.node, field.resolvedType);
        return;
      default:
        this.report({ path, problem: 'unsupported', zod: describeShape(shape), proto: describeField(field) });
    }
  }

  private compareField(path: string, node: JsonSchema, required: boolean, field: protobuf.Field): void {
    const { node: inner, nullable } = this.unwrapNullable(this.deref(node));
    const shape = this.shapeOf(inner);
    if (shape.kind === 'array') {
      if (!field.repeated || field.map) return this.report({ path, problem: 'cardinality', zod: describeShape(shape), proto: describeField(field) });
      if (shape.items.kind === 'array' || shape.items.kind === 'map') return this.report({ path, problem: 'unsupported', zod: describeShape(shape) });
      return this.compareValue(path, shape.items, field);
    }
    if (shape.kind === 'map') {
      if (!field.map) return this.report({ path, problem: 'cardinality', zod: describeShape(shape), proto: describeField(field) });
      if (keyTypeOf(field) !== 'string') return this.report({ path, problem: 'type', zod: describeShape(shape), proto: describeField(field) });
      return this.compareValue(path, shape.value, field);
    }
    if (field.repeated || field.map) return this.report({ path, problem: 'cardinality', zod: describeShape(shape), proto: describeField(field) });
    const zodOptional = !required || nullable;
    const protoOptional = field.options?.proto3_optional === true;
    if (zodOptional !== protoOptional) {
      this.report({ path, problem: 'optionality', zod: zodOptional ? 'optional' : 'required', proto: protoOptional ? 'optional' : 'required' });
    }
    this.compareValue(path, shape, field);
  }

  compareMessage(prefix: string, node: JsonSchema, type: protobuf.Type): void {
    const properties = node.properties ?? {};
    const required = new Set(node.required ?? []);
    const open = typeof node.additionalProperties === 'object';
    for (const [name, property] of Object.entries(properties)) {
      const field = type.fields[name];
      if (field === undefined) this.report({ path: `${prefix}${name}`, problem: 'missing_in_proto' });
      else this.compareField(`${prefix}${name}`, property, required.has(name), field);
    }
    if (open) {
      const extra = type.fields.additional_properties;
      if (extra === undefined) this.report({ path: `${prefix}additional_properties`, problem: 'missing_in_proto' });
      else this.compareField(`${prefix}additional_properties`, { type: 'object', additionalProperties: {} }, true, extra);
    }
    for (const field of type.fieldsArray) {
      if (field.name in properties || (open && field.name === 'additional_properties')) continue;
      this.report({ path: `${prefix}${field.name}`, problem: 'missing_in_zod', proto: describeField(field) });
    }
  }
}

/** Every disagreement between a contract's JSON Schema and a proto message, in field order. */
function disagreements(schema: JsonSchema, type: protobuf.Type): Disagreement[] {
  const walker = new Walker(schema.$defs ?? {});
  walker.compareMessage('', schema, type);
  return walker.found;
}

function loadProtoDir(): protobuf.Root {
  const dir = fileURLToPath(PROTO_DIR);
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.proto'))
    .map((name) => `${dir}${name}`);
  const root = new protobuf.Root().loadSync(files, { keepCase: true });
  root.resolveAll();
  return root;
}

function parseProto(source: string): protobuf.Root {
  const root = new protobuf.Root();
  root.addJSON(protobuf.common.get('google/protobuf/struct.proto')?.nested ?? {});
  protobuf.parse(source, root, { keepCase: true });
  root.resolveAll();
  return root;
}

function schemaOf(contract: ContractName): JsonSchema {
  return jsonSchemaOf(contract) as JsonSchema;
}

describe('proto/writ/v1 mirrors the zod contracts', () => {
  const root = loadProtoDir();

  it.each(Object.entries(MIRRORS))('given %s, then its proto message %s agrees field by field', (contract, message) => {
    // when
    const found = disagreements(schemaOf(contract as ContractName), root.lookupType(message));
    // then
    expect(found).toEqual([]);
  });

  it('given the proto package, then every top-level message mirrors a registered contract', () => {
    const pkg = root.lookup('writ.v1') as protobuf.Namespace;
    const topLevel = pkg.nestedArray.filter((nested) => nested instanceof protobuf.Type).map((type) => type.name);
    expect(topLevel.sort()).toEqual(Object.keys(MIRRORS).sort());
    for (const contract of Object.keys(MIRRORS)) expect(CONTRACTS).toHaveProperty(contract);
  });

  it('given every proto file, then it is proto3 in package writ.v1', () => {
    for (const name of readdirSync(PROTO_DIR).filter((file) => file.endsWith('.proto'))) {
      const source = readFileSync(new URL(name, PROTO_DIR), 'utf8');
      expect(source, name).toMatch(/^syntax = "proto3";$/m);
      expect(source, name).toMatch(/^package writ\.v1;$/m);
    }
  });
});

describe('the agreement check can fail', () => {
  const source = readFileSync(new URL('action_request.proto', PROTO_DIR), 'utf8');

  /** Applies textual edits to the real file, insisting each one matched. */
  function mutate(edits: ReadonlyArray<readonly [string, string]>): string {
    return edits.reduce((text, [from, to]) => {
      expect(text, `mutation target "${from}"`).toContain(from);
      return text.replace(from, to);
    }, source);
  }

  it('given a proto ActionRequest with deliberate mistakes, when compared, then each mistake is reported at its path', () => {
    // given
    const broken = mutate([
      ['string reason = 10;', 'string reasons = 10;'],
      ['repeated string target_resources = 6;', 'string target_resources = 6;'],
      ['optional string task_id = 2;', 'string task_id = 2;'],
      ['string proposed_at = 12;', 'int64 proposed_at = 12;'],
      ['optional int32 timeout_ms = 10;', 'optional int64 timeout_ms = 10;'],
      ['repeated string files_owned = 4;', ''],
      ['map<string, string> headers = 8;', 'google.protobuf.Struct headers = 8;'],
      ['google.protobuf.Struct additional_properties = 15;', ''],
      ['optional TaskSpec task = 3;', 'optional TaskSpec task = 3;\n  bool urgent = 13;'],
    ]);
    // when
    const found = disagreements(schemaOf('ActionRequest'), parseProto(broken).lookupType('writ.v1.ActionRequest'));
    // then
    expect(found).toEqual([
      { path: 'task_id', problem: 'optionality', zod: 'optional', proto: 'required' },
      { path: 'task.files_owned', problem: 'missing_in_proto' },
      { path: 'target_resources', problem: 'cardinality', zod: 'repeated string', proto: 'string' },
      { path: 'params.headers', problem: 'cardinality', zod: 'map<string, string>', proto: 'google.protobuf.Struct' },
      { path: 'params.timeout_ms', problem: 'type', zod: 'int32', proto: 'int64' },
      { path: 'params.additional_properties', problem: 'missing_in_proto' },
      { path: 'reason', problem: 'missing_in_proto' },
      { path: 'proposed_at', problem: 'type', zod: 'string', proto: 'int64' },
      { path: 'urgent', problem: 'missing_in_zod', proto: 'bool' },
      { path: 'reasons', problem: 'missing_in_zod', proto: 'string' },
    ]);
  });

  it('given nullable and optional zod fields, when the proto drops `optional`, then optionality is reported', () => {
    // given: causation_id is nullable, idempotency_key optional
    const envelope = readFileSync(new URL('event_envelope.proto', PROTO_DIR), 'utf8')
      .replace('optional string causation_id = 14;', 'string causation_id = 14;')
      .replace('optional string idempotency_key = 16;', 'string idempotency_key = 16;')
      .replace('string hash = 18;', 'optional string hash = 18;');
    // when
    const found = disagreements(schemaOf('EventEnvelope'), parseProto(envelope).lookupType('writ.v1.EventEnvelope'));
    // then
    expect(found).toEqual([
      { path: 'causation_id', problem: 'optionality', zod: 'optional', proto: 'required' },
      { path: 'idempotency_key', problem: 'optionality', zod: 'optional', proto: 'required' },
      { path: 'hash', problem: 'optionality', zod: 'required', proto: 'optional' },
    ]);
  });

  it('given a JSON object field mapped to a scalar and a message field mapped to a string, when compared, then both are type mismatches', () => {
    const grant = readFileSync(new URL('capability_grant.proto', PROTO_DIR), 'utf8')
      .replace('ResourceScope resource_scope = 12;', 'string resource_scope = 12;')
      .replace('int32 max_uses = 13;', 'double max_uses = 13;');
    const envelope = readFileSync(new URL('event_envelope.proto', PROTO_DIR), 'utf8').replace(
      'google.protobuf.Struct payload = 13;',
      'string payload = 13;',
    );
    expect(disagreements(schemaOf('CapabilityGrantClaims'), parseProto(grant).lookupType('writ.v1.CapabilityGrantClaims'))).toEqual([
      { path: 'resource_scope', problem: 'type', zod: 'message', proto: 'string' },
      { path: 'max_uses', problem: 'type', zod: 'int32', proto: 'double' },
    ]);
    expect(disagreements(schemaOf('EventEnvelope'), parseProto(envelope).lookupType('writ.v1.EventEnvelope'))).toEqual([
      { path: 'payload', problem: 'type', zod: 'google.protobuf.Struct', proto: 'string' },
    ]);
  });

  it('given a contract with a discriminated union, when compared, then the union is reported as unsupported', () => {
    const proto = 'syntax = "proto3"; package writ.v1; message EvidenceRef { string artifact_id = 1; string selector = 2; optional string excerpt_hash = 3; string capture_method = 4; optional double confidence = 5; string trust_tier = 6; }';
    const found = disagreements(schemaOf('EvidenceRef'), parseProto(proto).lookupType('writ.v1.EvidenceRef'));
    expect(found).toEqual([
      { path: 'selector', problem: 'optionality', zod: 'optional', proto: 'required' },
      { path: 'selector', problem: 'unsupported', zod: 'union', proto: 'string' },
    ]);
  });
});
