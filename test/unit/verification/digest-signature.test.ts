import { spawnSync } from "node:child_process";
import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSupportedSigningKey, verifyDigestSignature } from "../../../src/domain/verification/digest-signature.ts";
import type { HashAlgorithm } from "../../../src/domain/verification/hash-algorithm.ts";

// openssl makes every key and signature; the code under test only ever sees the digest.

let dir: string;
const message = Buffer.from("the document the card signed\n");
const messagePath = () => join(dir, "message.txt");

function openssl(...args: string[]): Buffer {
  const result = spawnSync("openssl", args);
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout;
}

function key(name: string, ...genArgs: string[]): { keyPath: string; publicKey: KeyObject } {
  const keyPath = join(dir, `${name}.key`);
  openssl("genpkey", ...genArgs, "-out", keyPath);
  return { keyPath, publicKey: createPublicKey(readFileSync(keyPath)) };
}

function sign(keyPath: string, hash: HashAlgorithm, ...sigopts: string[]): Buffer {
  const out = join(dir, `sig-${Math.random()}`);
  openssl("dgst", `-${hash}`, ...sigopts.flatMap((o) => ["-sigopt", o]), "-sign", keyPath, "-out", out, messagePath());
  return readFileSync(out);
}

const digestOf = (hash: HashAlgorithm) => createHash(hash).update(message).digest();
const hashes: HashAlgorithm[] = ["sha256", "sha384", "sha512"];

let rsa2048: ReturnType<typeof key>;
let rsa2049: ReturnType<typeof key>;
let p256: ReturnType<typeof key>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "shomei-digest-signature-"));
  writeFileSync(messagePath(), message);
  rsa2048 = key("rsa2048", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048");
  // 2049 bits: the PSS encoding is one octet shorter than the modulus.
  rsa2049 = key("rsa2049", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2049");
  p256 = key("p256", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256");
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tampered(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[index]! ^= 0x01;
  return copy;
}

describe("RSA PKCS#1 v1.5 over a digest", () => {
  for (const hash of hashes) {
    it(`${hash}: openssl's signature verifies; another digest, a flipped bit or another hash does not`, () => {
      const signature = sign(rsa2048.keyPath, hash);
      const digest = digestOf(hash);
      expect(verifyDigestSignature(rsa2048.publicKey, hash, digest, signature)).toBe(true);
      expect(verifyDigestSignature(rsa2048.publicKey, hash, tampered(digest, 0), signature)).toBe(false);
      expect(verifyDigestSignature(rsa2048.publicKey, hash, digest, tampered(signature, 100))).toBe(false);
      const other = hash === "sha256" ? "sha384" : "sha256";
      expect(verifyDigestSignature(rsa2048.publicKey, other, digestOf(other), signature)).toBe(false);
    });
  }

  it("a signature one octet short, or by another key, does not verify", () => {
    const signature = sign(rsa2048.keyPath, "sha256");
    expect(verifyDigestSignature(rsa2048.publicKey, "sha256", digestOf("sha256"), signature.subarray(1))).toBe(false);
    expect(verifyDigestSignature(rsa2049.publicKey, "sha256", digestOf("sha256"), sign(rsa2048.keyPath, "sha256"))).toBe(false);
  });
});

describe("RSA-PSS over a digest", () => {
  for (const [label, saltlen] of [["salt = hash length", "-1"], ["maximum salt", "-2"], ["no salt", "0"]] as const) {
    for (const hash of hashes) {
      it(`${hash}, ${label}: verifies with a 2048- and a 2049-bit key; tampering does not`, () => {
        for (const k of [rsa2048, rsa2049]) {
          const signature = sign(k.keyPath, hash, "rsa_padding_mode:pss", `rsa_pss_saltlen:${saltlen}`);
          const digest = digestOf(hash);
          expect(verifyDigestSignature(k.publicKey, hash, digest, signature)).toBe(true);
          expect(verifyDigestSignature(k.publicKey, hash, tampered(digest, 5), signature)).toBe(false);
          expect(verifyDigestSignature(k.publicKey, hash, digest, tampered(signature, 7))).toBe(false);
        }
      });
    }
  }
});

describe("ECDSA P-256 over a digest", () => {
  for (const hash of hashes) {
    it(`${hash}: openssl's DER signature verifies; tampering does not`, () => {
      const signature = sign(p256.keyPath, hash);
      const digest = digestOf(hash);
      expect(verifyDigestSignature(p256.publicKey, hash, digest, signature)).toBe(true);
      expect(verifyDigestSignature(p256.publicKey, hash, tampered(digest, 31), signature)).toBe(false);
      // The last octet of s.
      expect(verifyDigestSignature(p256.publicKey, hash, digest, tampered(signature, signature.length - 1))).toBe(false);
    });
  }

  it("a signature that is not DER, or by another key, does not verify", () => {
    const signature = sign(p256.keyPath, "sha256");
    const digest = digestOf("sha256");
    expect(verifyDigestSignature(p256.publicKey, "sha256", digest, Buffer.concat([signature, Buffer.of(0)]))).toBe(false);
    expect(verifyDigestSignature(p256.publicKey, "sha256", digest, Buffer.alloc(64, 1))).toBe(false);
    const other = key("p256-other", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256");
    expect(verifyDigestSignature(other.publicKey, "sha256", digest, signature)).toBe(false);
  });
});

it("only RSA and P-256 keys are supported", () => {
  expect(isSupportedSigningKey(rsa2048.publicKey)).toBe(true);
  expect(isSupportedSigningKey(p256.publicKey)).toBe(true);
  expect(isSupportedSigningKey(key("p384", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384").publicKey)).toBe(false);
  expect(isSupportedSigningKey(key("ed25519", "-algorithm", "ED25519").publicKey)).toBe(false);
});
