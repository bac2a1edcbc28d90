export { Tool, toolOptionsOf } from './tool.decorator';
export { Describe, descriptionOf, describedPropertiesOf } from './describe.decorator';
export type { ToolOptions, ApprovalPolicy, ApprovalByArgs, DeclaredApproval, ClassType, AnyClass, ToolAnnotations } from './types';
export { Sensitive, sensitivePropertiesOf } from './sensitive.decorator';
