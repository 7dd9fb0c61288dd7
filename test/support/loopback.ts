/**
 * Distinct loopback addresses for servers that must count as distinct hosts (a verifier counts
 * witnesses by address, not by port). Linux routes all of 127.0.0.0/8 to loopback, so each
 * server gets its own 127.0.0.N, N from 2 to 254, in turn.
 */
let next = 0;

export function nextLoopback(): string {
  const n = 2 + (next++ % 253);
  return `127.0.0.${n}`;
}
