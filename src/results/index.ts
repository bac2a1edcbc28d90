export * from './wire';
export * from './helpers';
export * from './content';
