export * from './keys.js';
export * from './names.js';
export * from './types.js';
export * from './manifestwork.js';
export * from './feedback.js';
export * from './cluster-secret.js';
export * from './records.js';
export * from './report-crd.js';
