export { withTransport, type TransportOptions } from './options.js';
