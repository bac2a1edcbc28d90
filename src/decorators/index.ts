export { Tool, toolOptionsOf } from './tool.decorator';
export { Describe, descriptionOf, describedPropertiesOf } from './describe.decorator';
export type { ToolOptions, ClassType, AnyClass } from './types';
