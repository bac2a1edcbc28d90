/** Base class of every error this library throws. */
export class ToolnexusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A programmer error found while registering a tool: no `@Tool`, no `run`, a duplicate name. */
export class ToolRegistrationError extends ToolnexusError {}

/** An answer names a suspension that no store knows (stale, forged or misrouted). */
export class UnknownSuspensionError extends ToolnexusError {
  constructor(readonly id: string) {
    super(`unknown suspension: ${id}`);
  }
}

/** An answer arrives for a suspension whose outcome is already settled differently. */
export class AlreadyResolvedError extends ToolnexusError {
  constructor(
    readonly id: string,
    readonly status: string,
  ) {
    super(`suspension ${id} is already ${status}`);
  }
}
