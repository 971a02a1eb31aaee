import qs from "qs";
import { describe, expect, it } from "vitest";
import { parsePlainForm } from "../../src/http/plain-form.ts";
import { SeededRandom } from "../support/seeded-random.ts";

/** qs as express.urlencoded({ extended: false, parameterLimit: 100 }) calls it (and as src/http/middleware/form-body.ts calls it for a form that is not plain). */
function viaQs(text: string, count: number): unknown {
  return qs.parse(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: "utf-8", parameterLimit: 100, strictDepth: true });
}

/** Keys and values in their order, arrays as arrays: what toEqual alone would not check (key order). */
function shape(value: unknown): string {
  return JSON.stringify(value);
}

const formPieces = ["]=", "a", "b", "grant_type", "refresh_token", "0", "1", "x", "", "=", "==", "+", "%20", "%2B", "%3D", "%26", "%", "%2", "%zz", "%E3%81%82", "%E3%81", "é", "日本", "a+b", "%C3%A9", "constructor", "__proto__", "toString", "[", "]", "%5B", "%5d", "a[b]", "." ];

function randomForm(seed: number): string {
  const random = new SeededRandom("plain-form", seed);
  const pieces = (most: number) => Array.from({ length: random.int(most) + 1 }, () => random.pick(formPieces)).join("");
  const parts: string[] = [];
  for (let p = random.int(6); p >= 0; p--) parts.push(random.chance(0.15) ? pieces(3) : `${pieces(3)}=${pieces(3)}`);
  return parts.join("&");
}

describe("parsePlainForm parses as qs does", () => {
  it.each([
    "grant_type=refresh_token&refresh_token=abc&client_id=demo-client",
    "scope=openid+profile&state=a%20b&redirect_uri=https%3A%2F%2Frp.example%2Fcb",
    "a=1&a=2&a=3&b=",
    "a&b=&=c&&d=%E3%81%82",
    "bad=%E3%81&worse=%zz&plus=a+%2B+b",
    "1=one&0=zero&z=last&2=two",
    "x=%5d&y=[[%5B]]&details=%5B%7B%22type%22%3A%22a%22%7D%5D",
  ])("%s", (text) => {
    const count = text.split("&").length;
    expect(shape(parsePlainForm(text))).toBe(shape(viaQs(text, count)));
  });

  it("leaves forms with brackets in keys, `]=`, or prototype names to qs", () => {
    for (const text of ["a[b]=1", "a%5Bb%5D=1", "x[", "a=b]=c", "__proto__=1", "constructor=x", "toString=1&a=2", "a=1&hasOwnProperty=2"]) {
      expect(parsePlainForm(text), text).toBeUndefined();
    }
  });

  it("agrees with qs on 5,000 random forms, wherever it answers", () => {
    let answered = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const text = randomForm(seed);
      const mine = parsePlainForm(text);
      if (mine === undefined) continue;
      answered++;
      expect(shape(mine), text).toBe(shape(viaQs(text, text.split("&").length)));
    }
    // Brackets and prototype names are among the pieces, so about a fifth of the forms are plain: still hundreds compared.
    expect(answered).toBeGreaterThan(500);
  });
});
