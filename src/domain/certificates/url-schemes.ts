/** URLs remembered by each check: more than any deployment's distinct CRL and OCSP URLs. */
const maxRememberedUrls = 1000;

/**
 * A test of whether a URL parses and uses one of `schemes` ("http:", …),
 * each URL judged once. Every status check asks it about its certificate's
 * CRL distribution points and OCSP responders, which few CAs vary, and
 * parsing a URL costs more than the rest of choosing a source. The oldest
 * URL is forgotten past the limit, so a stream of distinct URLs cannot grow
 * it.
 */
export function urlSchemeTest(schemes: readonly string[]): (url: string) => boolean {
  const judged = new Map<string, boolean>();
  return (url) => {
    let accepted = judged.get(url);
    if (accepted === undefined) {
      accepted = URL.canParse(url) && schemes.includes(new URL(url).protocol);
      if (judged.size >= maxRememberedUrls) judged.delete(judged.keys().next().value!);
      judged.set(url, accepted);
    }
    return accepted;
  };
}
