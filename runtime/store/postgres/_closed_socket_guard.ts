/**
 * npm:postgres 3.4.9 (the newest) can write to a connection's socket after the connection closed: a small
 * write is queued with setImmediate, and when the server drops the connection first (a restart, a cut
 * connection) the queued write runs on a null socket and throws from the timer, outside any await, which
 * would end the whole process (upstream issues porsager/postgres#1154 and #1208, unfixed in 3.4.9). By then
 * the close has already failed the query the write belonged to (CONNECTION_CLOSED), and the retry layer
 * waits that out, so the write is moot. While a store is open this guard keeps exactly that error (its
 * message, thrown from the driver's `nextWrite`) from ending the process; every other uncaught error is left
 * to end it as before. Remove it when the driver guards its own write.
 */

/** Stops the driver's closed-socket write from ending the process until disposed. */
export function guardClosedSocketWrites(): Disposable {
  const onError = (event: ErrorEvent) => {
    if (isClosedSocketWrite(event.error)) event.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  return { [Symbol.dispose]: () => globalThis.removeEventListener("error", onError) };
}

/** The driver's write to a connection whose socket is already gone, and nothing else. */
export function isClosedSocketWrite(error: unknown): boolean {
  return error instanceof TypeError &&
    error.message === "Cannot read properties of null (reading 'write')" &&
    /\bnextWrite\b/.test(error.stack ?? "");
}
