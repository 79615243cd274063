export { NATS_URL, connectTestNats, deleteStreams, uniqueName } from './real-nats.js';
export { waitFor } from './wait-for.js';
