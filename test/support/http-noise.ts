import { gzipSync } from "node:zlib";
import { badPercentEncodings } from "./form-mutations.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * The parts of a browser or client request around its parameters, chosen at
 * random for fuzz cases: the Cookie header, the Accept header, and how a form
 * body is labelled and encoded (right, wrong charset, another media type,
 * compressed or claiming to be).
 */
export function randomCookie(random: SeededRandom, valid: readonly string[]): { name: string; header?: string } {
  const token = () => random.text(43, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
  return random.weighted<() => { name: string; header?: string }>([
    [3, () => ({ name: "no cookie" })],
    [4, () => ({ name: "valid cookie", header: random.pick(valid) })],
    [2, () => ({ name: "unknown session", header: `shomei_session=${token()}; shomei_browser=${token()}` })],
    [
      2,
      () => ({
        name: "malformed cookie",
        header: random.pick([
          "shomei_session",
          "=;;=",
          'shomei_session="quoted"',
          `shomei_session=${random.pick(badPercentEncodings)}`,
          "shomei_session=a; shomei_session=b",
          `shomei_browser=${"x".repeat(200)}`,
          "shomei_session=\u00e9\u00ff",
          ";",
          `${random.pick(valid)}; shomei_session=${token()}`,
        ]),
      }),
    ],
    [1, () => ({ name: "long cookie", header: `shomei_session=${"a".repeat(random.pick([4000, 12000]))}` })],
  ])();
}

export function randomAccept(random: SeededRandom): string | undefined {
  return random.pick([undefined, "text/html", "application/json", "*/*", "text/html;q=0.1, application/json", "image/png", "\u00e9", ""]);
}

/** A form body with its Content-Type (and Content-Encoding) headers, usually right, sometimes not. */
export function formBody(form: string, random: SeededRandom): { name: string; headers: Record<string, string>; body: Buffer } {
  const urlencoded = "application/x-www-form-urlencoded";
  return random.weighted<() => { name: string; headers: Record<string, string>; body: Buffer }>([
    [12, () => ({ name: "form", headers: { "content-type": urlencoded }, body: Buffer.from(form, "latin1") })],
    [
      1,
      () => ({
        name: "form, odd charset",
        headers: { "content-type": `${urlencoded}; charset=${random.pick(["utf-16", "latin1", "x-unknown", "utf-8", '"utf-8"', ""])}` },
        body: Buffer.from(form, "latin1"),
      }),
    ],
    [1, () => ({ name: "JSON body", headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(Object.fromEntries(new URLSearchParams(form)))) })],
    [
      1,
      () => ({
        name: "other media type",
        headers: random.chance(0.2) ? ({} as Record<string, string>) : { "content-type": random.pick(["text/plain", "multipart/form-data; boundary=x", "multipart/form-data", "application/xml", "*/*", "x", ";"]) },
        body: Buffer.from(form, "latin1"),
      }),
    ],
    [
      1,
      () => {
        const encoding = random.pick(["gzip", "deflate", "br", "compress", "identity", "gzip, gzip"]);
        const encoded = encoding === "gzip" && random.chance(0.5);
        return { name: `content-encoding ${encoding}${encoded ? "" : " (not encoded)"}`, headers: { "content-type": urlencoded, "content-encoding": encoding }, body: encoded ? gzipSync(form) : Buffer.from(form, "latin1") };
      },
    ],
    [1, () => ({ name: "invalid UTF-8 bytes", headers: { "content-type": urlencoded }, body: Buffer.concat([Buffer.from(form, "latin1"), Buffer.from("&x="), Buffer.from([0xff, 0xc3, 0x28])]) })],
  ])();
}
