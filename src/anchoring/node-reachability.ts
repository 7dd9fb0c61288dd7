/**
 * Whether a consensus node can be reached, found out without handing the SDK any bytes: a plain
 * TCP connection to the node's address, opened and closed at once, writing nothing. This is what
 * lets the adapter (hedera-ledger.ts) answer `unsent` (ledger.ts) only when nothing can have
 * left: if no connection opens, the bytes stay here.
 *
 * `AnswerFreshness` remembers the client through which a node last answered, and when: while that
 * answer is fresh, a request through it skips the check.
 */
import { connect } from "node:net";

/**
 * Opens a TCP connection to `address` (`host:port`, `[v6]:port`) and closes it at once, writing
 * nothing: null once it opened, otherwise why not (refused, no route, no answer within
 * `timeoutMs`).
 */
export function tcpConnectProblem(address: string, timeoutMs: number): Promise<string | null> {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (m === null) return Promise.resolve(`not a host:port address: ${address}`);
  const [host, port] = [m[1]!, Number(m[2])];
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (problem: string | null) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => undefined);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no connection to ${address} within ${timeoutMs} ms`), timeoutMs);
    socket.once("connect", () => done(null));
    socket.once("error", (e: NodeJS.ErrnoException) => done(`${address}: ${e.code ?? e.message}`));
  });
}

/**
 * Null if a TCP connection opens to `node` (any of its addresses in `network`, the SDK's
 * `{ "host:port": accountId }`), otherwise why not. For a query (`node` null), which goes to a
 * node of the SDK's choosing, one address picked at random. With no address known for the node,
 * null: the SDK then fails on its own.
 */
export async function nodeUnreachable(network: Readonly<Record<string, { toString(): string }>>, node: string | null, timeoutMs: number): Promise<string | null> {
  const all = Object.entries(network);
  const addresses =
    node === null
      ? all.slice(Math.floor(Math.random() * all.length)).slice(0, 1).map(([a]) => a)
      : all.filter(([, id]) => id.toString() === node).map(([a]) => a);
  if (addresses.length === 0) return null;
  const problems = await Promise.all(addresses.map((a) => tcpConnectProblem(a, timeoutMs)));
  return problems.includes(null) ? null : `${node === null ? "consensus node" : `consensus node ${node}`} unreachable: ${problems.join("; ")}`;
}

/** The client a node last answered through (even with a refusal), and whether that answer is still fresh. */
export interface AnswerFreshness<C> {
  noted(c: C): void;
  /** True while `c` is the client of the last answer and it came less than `freshMs` ago. */
  trusted(c: C): boolean;
  /** Forgets `c`'s answer (the client is being thrown away). */
  forget(c: C): void;
}

export function answerFreshness<C>(freshMs: number): AnswerFreshness<C> {
  let answered: { client: C; at: number } | null = null;
  return {
    noted(c) {
      answered = { client: c, at: Date.now() };
    },
    trusted: (c) => answered !== null && answered.client === c && Date.now() - answered.at < freshMs,
    forget(c) {
      if (answered?.client === c) answered = null;
    },
  };
}
