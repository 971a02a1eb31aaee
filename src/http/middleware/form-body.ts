import { isUtf8 } from "node:buffer";
import { parse as parseContentType } from "content-type";
import express, { type RequestHandler } from "express";
import qs from "qs";
import type { RawParameters } from "../../domain/oidc/parameters.ts";
import { parsePlainForm } from "../plain-form.ts";

export const formType = "application/x-www-form-urlencoded";

/** The most parameters a client's form may hold. */
const parameterLimit = 100;

/**
 * Reads an `application/x-www-form-urlencoded` body into `req.body`, for the
 * routes clients post forms to (PAR, token, revocation, introspection, the
 * authorization endpoint's POST). A request without a form body is left
 * alone (`req.body` stays undefined).
 *
 * body-parser reads the body (express.text: the size limit, Content-Encoding,
 * the charset's decoding, a UTF-8 byte order mark, a short or aborted body,
 * each refused with its own error); this parses it, with what
 * express.urlencoded({ extended: false, parameterLimit: 100 }) allows: UTF-8
 * or ISO-8859-1, at most 100 parameters, qs's rules. express.urlencoded
 * itself is not used because it hands every form to qs: a form of plain keys
 * (what OAuth clients send) is parsed by parsePlainForm, which gives what qs
 * gives without qs's cost on every PAR and token call, nor the 20-50 ms qs
 * took over a megabyte of brackets in values (JSON in authorization_details).
 */
export function formBody(limitBytes: number): RequestHandler {
  // The type is checked here, before reading: body-parser need not check it again. Its decoder puts U+FFFD
  // where the bytes are not UTF-8; `verify` sees the bytes first, so such a form is refused, not read changed.
  const notUtf8 = new WeakSet<object>();
  const read = express.text({
    type: () => true,
    limit: limitBytes,
    defaultCharset: "utf-8",
    verify: (req, _res, bytes) => {
      if (!isUtf8(bytes)) notUtf8.add(req);
    },
  });
  return (req, res, next) => {
    if (!req.is(formType)) {
      next();
      return;
    }
    const charset = parseContentType(req.headers["content-type"] ?? "").parameters.charset?.toLowerCase() ?? "utf-8";
    if (charset !== "utf-8" && charset !== "iso-8859-1") {
      next(clientMistake(415, `unsupported charset "${charset.toUpperCase()}"`, "charset.unsupported"));
      return;
    }
    read(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      if (charset === "utf-8" && notUtf8.has(req)) {
        next(clientMistake(400, "the form is not valid UTF-8", "charset.invalid"));
        return;
      }
      try {
        req.body = parseForm(req.body as string, charset);
      } catch (mistake) {
        next(mistake);
        return;
      }
      next();
    });
  };
}

function parseForm(text: string, charset: string): RawParameters {
  if (text.length === 0) return {};
  let count = 1;
  for (let i = text.indexOf("&"); i !== -1; i = text.indexOf("&", i + 1)) {
    if (++count > parameterLimit) throw clientMistake(413, "too many parameters", "parameters.too.many");
  }
  // parsePlainForm decodes escapes as UTF-8; qs decodes them as the charset says.
  const plain = charset === "utf-8" ? parsePlainForm(text) : undefined;
  if (plain) return plain as RawParameters;
  // Depth 0: a bracket is part of a name, so qs's depth error (strictDepth) cannot arise.
  return qs.parse(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: charset as qs.IParseOptions["charset"], parameterLimit, strictDepth: true }) as RawParameters;
}

/** A client's mistake marked as body-parser marks its own, with a status and words it may be told (see errorAnswer). */
function clientMistake(status: number, message: string, type: string): Error {
  return Object.assign(new Error(message), { status, expose: true, type });
}
