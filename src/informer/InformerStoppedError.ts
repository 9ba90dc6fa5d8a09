/** The informer was stopped before what was awaited could happen (e.g. `whenSynced`). */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';

  constructor(message = 'informer stopped before it synced') {
    super(message);
  }
}
