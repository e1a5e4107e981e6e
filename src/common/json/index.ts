export * from './json';
export * from './json-validator';
export * from './json.decorator';
export * from './request-json';
