/**
 * Annotation values are user input of any length (all annotations of an object together
 * may reach 262,144 B) and any characters. Messages that quote one (events, conditions,
 * CLI refusals) quote a bounded preview, so a hostile value cannot blow up an Event or a
 * terminal.
 */

/** At most this many characters of a value are quoted in a message. */
export const ANNOTATION_PREVIEW_LENGTH = 64;

/** The value, JSON-quoted (NUL, newlines and lone surrogates show as escapes), cut to a readable length. */
export function previewAnnotationValue(value: string): string {
  if (value.length <= ANNOTATION_PREVIEW_LENGTH) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, ANNOTATION_PREVIEW_LENGTH))}… (${value.length} characters)`;
}
