import { accessSync, constants } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

/** The Debian package's Chromium; playwright-core drives it, it never downloads a browser of its own. */
export const chromiumPath = "/usr/bin/chromium";

const launchArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Undefined when Chromium can be started, otherwise why not. */
function probeChromium(): string | undefined {
  try {
    accessSync(chromiumPath, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? `no Chromium at ${chromiumPath}` : `Chromium at ${chromiumPath} is not executable (${code})`;
  }
}

/**
 * Whether browser suites can run: undefined when they can, else the reason
 * they are skipped, printed so the skip is visible. Under CI=true a missing
 * browser is a failure, so CI can never pass without having run them.
 */
export function browserUnavailable(): string | undefined {
  const reason = probeChromium();
  if (reason && process.env.CI === "true") {
    throw new Error(`${reason}. CI=true requires the browser tests (install the Debian chromium package).`);
  }
  if (reason) console.warn(`\n  SKIPPING browser tests: ${reason}\n`);
  return reason;
}

/** Title for describe blocks, so a skip says why in the test report. */
export function browserSuiteTitle(title: string, unavailable: string | undefined): string {
  return unavailable ? `${title} (skipped: ${unavailable})` : title;
}

/** Starts the installed Chromium, headless. The caller closes it. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: launchArgs });
}

/**
 * How wide the page is against its window, and the element reaching
 * furthest right (to say what overflows when something does).
 */
export function pageWidths(page: Page): Promise<{ scrollWidth: number; clientWidth: number; widest: string }> {
  return page.evaluate(() => {
    // The page's own DOM, typed here as far as used (the project's types have no DOM library).
    interface Element { tagName: string; className: unknown; getBoundingClientRect(): { right: number } }
    interface Document { documentElement: { scrollWidth: number; clientWidth: number }; body: { querySelectorAll(selector: string): ArrayLike<Element> } }
    const document = (globalThis as unknown as { document: Document }).document;
    const root = document.documentElement;
    let widest = "";
    let right = 0;
    for (const element of Array.from(document.body.querySelectorAll("*"))) {
      const box = element.getBoundingClientRect();
      if (box.right > right) {
        right = box.right;
        widest = `${element.tagName.toLowerCase()}.${String(element.className)} (${Math.round(box.right)}px)`;
      }
    }
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, widest };
  });
}
