export * from './wire';
export * from './helpers';
