export * from './optional-field';
export * from './rfc3339-date';
