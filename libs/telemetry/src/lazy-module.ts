import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const load = createRequire(import.meta.url);

/**
 * Loads the ES module `specifier` synchronously, when first needed rather than when this library is
 * imported: the OpenTelemetry pieces only some deployments use (NodeSDK with its OTLP trace
 * exporters, gRPC and declarative configuration; the OTLP metric exporters) are megabytes of every
 * service's resident memory otherwise. Its ES build (`import.meta.resolve`, then Node's `require`
 * of an ES module), so it shares its dependencies' instances with this library's own imports.
 */
export function loadWhenNeeded<T>(specifier: string): T {
  return load(fileURLToPath(import.meta.resolve(specifier))) as T;
}
