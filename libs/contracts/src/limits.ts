/**
 * Size ceilings for every contract. Validation rejects anything larger, so a
 * hostile or confused agent cannot push megabytes through a parse. Larger
 * payloads travel as artifacts and are referenced by id.
 */
export const LIMITS = {
  /** Titles, display names, short labels. */
  title: 256,
  /** Reasons, summaries, one-paragraph explanations. */
  text: 4_096,
  /** Goals, rationales, free-form multi-paragraph text. */
  longText: 16_384,
  /** References (`artifact:<id>`, URIs) and resource names. */
  ref: 1_024,
  /** Filesystem paths and path patterns. */
  path: 4_096,
  /** URLs. */
  url: 4_096,
  /** One argv element. */
  arg: 8_192,
  /** argv elements. */
  argvItems: 256,
  /** Inline file content or request body; larger content goes through an artifact. */
  inlineContent: 262_144,
  /** HTTP headers per request. */
  headers: 64,
  /** One HTTP header value. */
  headerValue: 8_192,
  /** Lists of references, resources or rules. */
  listItems: 256,
  /** Resources one action may name. */
  targetResources: 64,
  /** Short lists (expected effects, labels, handles). */
  shortListItems: 32,
  /** Raw inbound message kept by an IngressRecord (the NATS default max payload). */
  rawMessage: 1_048_576,
  /** A JSON string value inside an open (catchall) object. */
  jsonString: 65_536,
  /** Elements of a JSON array, or keys of a JSON object, inside an open object. */
  jsonItems: 1_024,
  /** Nesting depth of JSON values inside an open object. */
  jsonDepth: 16,
  /** Total JSON nodes (values, array elements, object members) inside an open object. */
  jsonNodes: 10_000,
  /** A detached signature or compact JWS. */
  signature: 8_192,
} as const;
