/** RFC 3339 at second precision, as `metav1.Time` marshals. */
export function formatKubeTime(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
