export { SEMCONV_VERSION } from './conventions';
export type { MeterProviderLike, TelemetryOption, TelemetryOptions, TracerProviderLike } from './options';
