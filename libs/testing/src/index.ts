export { NATS_URL, connectTestNats, deleteStreams, testNatsAuth, uniqueName } from './real-nats.js';
export { waitFor } from './wait-for.js';
export { freePort } from './free-port.js';
export { startTestNatsCluster, type TestNatsCluster } from './nats-cluster.js';
export { startNatsPullBlackhole, type NatsPullBlackhole } from './nats-pull-blackhole.js';
export { openEventStream, type EventStream, type ServerSentEvent } from './event-stream.js';
export { refusedByName } from './config-refusal.js';
