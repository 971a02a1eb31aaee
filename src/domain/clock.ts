/** Milliseconds since the epoch. Injected so tests can move time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
