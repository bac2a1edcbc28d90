import 'reflect-metadata';

export * from './results';
export * from './errors';
export * from './decorators';
export * from './schema';
export * from './toolkit';
export * from './suspension';
export * from './runner';
