import { afterEach, beforeEach } from 'vitest';

/**
 * Collects what reaches the process unhandled (an uncaught exception, an
 * unhandled rejection) while each test of the calling file runs: each would
 * end a real process, so a spec expects the list to stay empty. Call it at
 * the top of a spec file; the list is emptied before each test.
 */
export function trapUnhandled(): unknown[] {
  const seen: unknown[] = [];
  const record = (err: unknown): void => void seen.push(err);
  beforeEach(() => {
    seen.length = 0;
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  });
  // Registered before the file's own hooks, so it runs after them: what their teardown lets escape is still caught.
  afterEach(() => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  });
  return seen;
}
