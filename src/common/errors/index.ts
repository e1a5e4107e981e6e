export * from './answered-request';
export * from './domain-error';
export * from './error-entry';
export * from './common.errors';
export * from './problem';
export * from './problem.dto';
export * from './precondition-failed';
export * from './mongo-errors';
export { ProblemFilter, ProblemRenderer } from './problem.filter';
