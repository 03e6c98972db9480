/** A backend's store assembled from its parts, each a function of the backend's connection. */
type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (part: infer I) => void ? I
  : never;

/**
 * The operations of every part of `parts` (a backend's `_parts.ts`, imported as a namespace), built over
 * `db`; the backend adds its `files` and `close`.
 */
export function composeOps<D, P extends { readonly [name: string]: (db: D) => object }>(
  db: D,
  parts: P,
): Intersection<ReturnType<P[keyof P]>> {
  return Object.assign({}, ...Object.values(parts).map((part) => part(db)));
}
