export * from './subjects.js';
export * from './messages.js';
export * from './decode.js';
export * from './status-order.js';
export * from './accounts.js';
export * from './signed-request.js';
export * from './job-template.js';
