import type { Page } from "playwright-core";

/*
 * Checks of a rendered page as a person meets it, computed in the page from
 * what Chromium rendered (getComputedStyle, layout boxes), not from our CSS
 * source: contrast of every visible text and of every control's edge, the
 * language of every run of Japanese, and the order Tab visits the controls.
 * The scripts are strings run in the page (the project's types have no DOM).
 */

/** A text or an edge below the contrast it needs, said so a failure names it. */
export interface ContrastFailure {
  what: string;
  ratio: number;
  needed: number;
}

/** Shared by the scripts below: colours parsed, composited over what is behind them, and WCAG's contrast ratio. */
const colourFunctions = `
  const parse = (value) => {
    let m = /^rgba?\\(([^)]+)\\)$/.exec(value);
    if (m) { const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p[3] ?? 1]; }
    m = /^color\\(srgb ([^)]+)\\)$/.exec(value);
    if (m) { const p = m[1].split(/[\\s\\/]+/).filter(Boolean).map(Number); return [p[0] * 255, p[1] * 255, p[2] * 255, p[3] ?? 1]; }
    throw new Error("unparsed colour " + value);
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  /** What is painted behind an element: the backgrounds of it and its ancestors, composited from the root down. */
  const behind = (element) => {
    const chain = [];
    for (let e = element; e; e = e.parentElement) chain.push(e);
    const canvas = matchMedia("(prefers-color-scheme: dark)").matches ? [18, 18, 18, 1] : [255, 255, 255, 1];
    return chain.reverse().reduce((bg, e) => over(parse(getComputedStyle(e).backgroundColor), bg), canvas);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const describe = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\\s+/).join(".") : "");
`;

/**
 * Every visible text against what is behind it (4.5:1), and the edge of every
 * field, button drawn with a border, and language link against what is
 * behind the control (3:1, WCAG 1.4.11).
 */
export function contrastFailures(page: Page): Promise<ContrastFailure[]> {
  return page.evaluate(`(() => {
    ${colourFunctions}
    const failures = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      if (!node.textContent.trim() || seen.has(element)) continue;
      seen.add(element);
      if (!element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const bg = behind(element);
      const r = ratio(over(parse(getComputedStyle(element).color), bg), bg);
      if (r < 4.5) failures.push({ what: describe(element) + " " + JSON.stringify(node.textContent.trim().slice(0, 40)), ratio: Math.round(r * 100) / 100, needed: 4.5 });
    }
    const controls = document.querySelectorAll('input:not([type="hidden"]), textarea, .button.secondary, .languages a, .languages span');
    for (const control of controls) {
      if (!control.checkVisibility({ visibilityProperty: true })) continue;
      const style = getComputedStyle(control);
      if (parseFloat(style.borderTopWidth) === 0) continue;
      const bg = behind(control.parentElement);
      const r = ratio(over(parse(style.borderTopColor), bg), bg);
      if (r < 3) failures.push({ what: "edge of " + describe(control), ratio: Math.round(r * 100) / 100, needed: 3 });
    }
    return failures;
  })()`);
}

/**
 * Runs of text in a language other than the page's whose element does not
 * say so: Japanese on an English page outside lang="ja", and on any page the
 * language switch's names without their own lang.
 */
export function misLabelledLanguage(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const pageLang = document.documentElement.lang;
    const japanese = /[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}]/u;
    const names = { English: "en", "日本語": "ja" };
    const wrong = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      if (!text) continue;
      const lang = node.parentElement.closest("[lang]")?.getAttribute("lang") ?? pageLang;
      if (pageLang === "en" && japanese.test(text) && lang !== "ja") wrong.push(text + " (lang " + lang + ")");
      if (Object.hasOwn(names, text) && lang !== names[text]) wrong.push(text + " (lang " + lang + ")");
    }
    return wrong;
  })()`);
}

/** The page's controls a person can reach, in document order, each named by tag, id or name, and text. */
const controlsScript = `
  const name = (e) => [e.tagName.toLowerCase(), e.id || e.getAttribute("name") || "", (e.innerText || e.value || "").trim().slice(0, 30)].join("|");
  const controls = () => [...document.querySelectorAll('a[href], button, input:not([type="hidden"]), textarea, summary')]
    .filter((e) => !e.disabled && e.checkVisibility({ visibilityProperty: true }));
`;

/**
 * Which controls Tab visits, from the first control on: the keys pressed as
 * a person does, the focus read after each. Ends when the focus leaves the
 * page's controls or comes back to the first.
 */
export async function tabOrder(page: Page): Promise<{ expected: string[]; reached: string[] }> {
  const expected = await page.evaluate<string[]>(`(() => { ${controlsScript} const all = controls(); all[0]?.focus(); return all.map(name); })()`);
  const reached: string[] = [];
  const focused = () => page.evaluate<string | null>(`(() => { ${controlsScript} const e = document.activeElement; return e && controls().includes(e) ? name(e) : null; })()`);
  let current = await focused();
  while (current !== null && reached.length <= expected.length) {
    reached.push(current);
    await page.keyboard.press("Tab");
    current = await focused();
    if (current === reached[0]) break;
  }
  return { expected, reached };
}
