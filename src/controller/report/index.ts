export * from './report-reconciler.js';
