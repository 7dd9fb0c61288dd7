/**
 * A certificate authority of the tests' own, made with openssl in a throwaway folder, and server
 * certificates it signs for given DNS names. Nothing trusts it unless told: Node.js and Bun through
 * `NODE_EXTRA_CA_CERTS=<ca.pem>` (read when the process starts, so only a process started with it
 * trusts it), Chromium through `--ignore-certificate-errors-spki-list=<spkiSha256>` naming the
 * server certificate's key. A server certificate is EC P-256, valid from now for ten days,
 * for `serverAuth`, with the names as subjectAltName: what ordinary validation asks of a real one.
 */
import { X509Certificate, createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./env.ts";
import { requireProgram } from "./programs.ts";

export interface TestCa {
  /** The CA certificate, PEM: the file to name in NODE_EXTRA_CA_CERTS. */
  readonly caFile: string;
  readonly caPem: string;
  /** A server key and certificate signed by this CA for `names` (DNS names). */
  serverCertificate(names: readonly string[]): ServerCertificate;
}

export interface ServerCertificate {
  readonly names: readonly string[];
  /** PEM */
  readonly key: string;
  /** PEM, the server's certificate alone (a real server may send intermediates; this CA has none). */
  readonly cert: string;
  /** base64 of the SHA-256 of the certificate's SubjectPublicKeyInfo (DER): Chromium's form for a key it is told to trust. */
  readonly spkiSha256: string;
}

function openssl(args: string[], cwd: string): void {
  const bin = requireProgram("openssl");
  const run = Bun.spawnSync([bin, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed (${run.exitCode}): ${run.stderr.toString()}`);
}

/** base64(SHA-256(SubjectPublicKeyInfo DER)) of a PEM certificate. */
export function spkiSha256(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: "spki", format: "der" });
  return createHash("sha256").update(spki).digest("base64");
}

/** A new CA, named `name`, in a folder removed at cleanup. */
export function createTestCa(name = "docverify test CA"): TestCa {
  const dir = tempDir("docverify-ca-");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(
    [
      "req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "10", "-subj", `/CN=${name}`,
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  const caFile = join(dir, "ca.pem");
  let serial = 1;
  return {
    caFile,
    caPem: readFileSync(caFile, "utf8"),
    serverCertificate(names) {
      if (names.length === 0) throw new Error("a server certificate needs at least one name");
      const n = serial++;
      const base = `server-${n}`;
      writeFileSync(
        join(dir, `${base}.ext`),
        [
          "basicConstraints=critical,CA:FALSE",
          "keyUsage=critical,digitalSignature",
          "extendedKeyUsage=serverAuth",
          `subjectAltName=${names.map((d) => `DNS:${d}`).join(",")}`,
        ].join("\n") + "\n",
      );
      openssl(["req", ...ec, "-keyout", `${base}.key`, "-out", `${base}.csr`, "-subj", `/CN=${names[0]}`], dir);
      openssl(
        [
          "x509", "-req", "-in", `${base}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", String(1000 + n),
          "-days", "10", "-extfile", `${base}.ext`, "-out", `${base}.pem`,
        ],
        dir,
      );
      const cert = readFileSync(join(dir, `${base}.pem`), "utf8");
      return { names: [...names], key: readFileSync(join(dir, `${base}.key`), "utf8"), cert, spkiSha256: spkiSha256(cert) };
    },
  };
}
