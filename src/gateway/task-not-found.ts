/** A2A TaskNotFoundError, raised by any step (src/gateway/a2a-error.ts renders it); its own module so steps need not import the facade. */
export class TaskNotFound extends Error {
  override readonly name = 'TaskNotFound';
  constructor(readonly taskId: string) {
    super('task not found');
  }
}
