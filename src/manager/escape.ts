// C0 controls (newline included), DEL and C1 controls: what could end a probe's line early or drive a terminal that prints it.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** `text` with every control character written as `\xNN`, so text from the cluster stays one inert line in a probe's body. */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
