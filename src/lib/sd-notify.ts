/**
 * sd_notify(3) without libsystemd, for `Type=notify`: systemd passes the path of a unix
 * datagram socket in `$NOTIFY_SOCKET`, and the service sends `READY=1` once it serves,
 * `STOPPING=1` when it begins to drain, and `STATUS=…` lines `systemctl status` shows.
 *
 * Bun has no unix datagram sockets: `node:dgram` and `Bun.udpSocket` speak UDP only, and
 * `Bun.connect({ unix })` is a stream socket, which a SOCK_DGRAM listener refuses. So the
 * message goes through libc's `socket(2)` and `sendto(2)` by `bun:ffi`, which works in the
 * compiled executable (it needs writable-executable memory for its call stubs, as Bun's JIT
 * does; the unit does not set MemoryDenyWriteExecute). Spawning `systemd-notify --ready`
 * instead would need `NotifyAccess=all`, and systemd drops a message from a process that has
 * already exited before it could be attributed to the unit, so readiness could be lost.
 *
 * A notification is best effort by contract (sd_notify ignores errors too): a failure is
 * returned as a message for the caller to log, never thrown. With `Type=notify`, a lost
 * `READY=1` shows up as a start timeout in `systemctl status`, not as silent success.
 */

export interface Notifier {
  /** False when there is no `$NOTIFY_SOCKET` (not started by systemd with Type=notify). */
  readonly enabled: boolean;
  /** Sends one notification (newline-separated `KEY=value` lines). Returns null or what went wrong. */
  notify(state: string): string | null;
}

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const MSG_NOSIGNAL = 0x4000;
/** sizeof(struct sockaddr_un): a 2-byte family and a 108-byte path. */
const SOCKADDR_UN_SIZE = 110;

type Libc = {
  socket(domain: number, type: number, protocol: number): number;
  sendto(fd: number, buf: Uint8Array, len: number, flags: number, addr: Uint8Array, addrlen: number): number;
  close(fd: number): number;
};

let libc: Libc | null = null;

async function loadLibc(): Promise<Libc> {
  if (libc !== null) return libc;
  // Imported on first use only, so nothing of bun:ffi runs unless systemd asked for readiness.
  const { dlopen, FFIType, ptr } = await import("bun:ffi");
  let lib: ReturnType<typeof open> | null = null;
  function open(name: string) {
    return dlopen(name, {
      socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      sendto: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i64 },
      close: { args: [FFIType.i32], returns: FFIType.i32 },
    });
  }
  const errors: string[] = [];
  // glibc first (Bun's usual Linux build links it), then musl's names.
  for (const name of ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"]) {
    try {
      lib = open(name);
      break;
    } catch (e) {
      errors.push(`${name}: ${(e as Error).message}`);
    }
  }
  if (lib === null) throw new Error(`cannot load libc for sd_notify (${errors.join("; ")})`);
  const s = lib.symbols;
  libc = {
    socket: (d, t, p) => Number(s.socket(d, t, p)),
    sendto: (fd, buf, len, flags, addr, addrlen) => Number(s.sendto(fd, ptr(buf), len, flags, ptr(addr), addrlen)),
    close: (fd) => Number(s.close(fd)),
  };
  return libc;
}

/** The `sockaddr_un` for a `$NOTIFY_SOCKET` value, and its length; `@name` is the abstract namespace. */
export function notifyAddress(socketPath: string): { addr: Uint8Array; length: number } {
  const abstract = socketPath.startsWith("@");
  const path = new TextEncoder().encode(abstract ? socketPath.slice(1) : socketPath);
  // A filesystem path needs its terminating NUL inside sun_path; an abstract name starts with NUL.
  const pathBytes = path.length + 1;
  if (pathBytes > SOCKADDR_UN_SIZE - 2) throw new Error(`NOTIFY_SOCKET is longer than a unix socket address allows (${path.length} bytes)`);
  const addr = new Uint8Array(SOCKADDR_UN_SIZE);
  new DataView(addr.buffer).setUint16(0, AF_UNIX, true);
  addr.set(path, abstract ? 3 : 2);
  // Either way the length is the family, one NUL (leading for abstract, trailing for a path) and the name;
  // abstract names are length-delimited, so nothing after the name may count.
  return { addr, length: 2 + pathBytes };
}

/**
 * A notifier for `$NOTIFY_SOCKET` (`socketPath`), or a disabled one when it is unset. Only
 * absolute paths and `@abstract` names are accepted, as sd_notify(3) does.
 */
export async function createNotifier(socketPath: string | undefined): Promise<Notifier> {
  if (socketPath === undefined || socketPath === "") return { enabled: false, notify: () => null };
  if (!socketPath.startsWith("/") && !socketPath.startsWith("@")) {
    return { enabled: true, notify: () => `NOTIFY_SOCKET ${JSON.stringify(socketPath)} is neither an absolute path nor an abstract name` };
  }
  if (process.platform !== "linux") return { enabled: true, notify: () => "sd_notify is supported on Linux only" };
  let c: Libc;
  try {
    c = await loadLibc();
  } catch (e) {
    const message = (e as Error).message;
    return { enabled: true, notify: () => message };
  }
  let address: { addr: Uint8Array; length: number };
  try {
    address = notifyAddress(socketPath);
  } catch (e) {
    const message = (e as Error).message;
    return { enabled: true, notify: () => message };
  }
  return {
    enabled: true,
    notify(state) {
      const fd = c.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return "socket(AF_UNIX, SOCK_DGRAM) failed";
      try {
        const message = new TextEncoder().encode(state);
        const sent = c.sendto(fd, message, message.length, MSG_NOSIGNAL, address.addr, address.length);
        return sent === message.length ? null : `sendto ${socketPath} failed`;
      } finally {
        c.close(fd);
      }
    },
  };
}
