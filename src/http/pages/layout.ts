import { Html, html } from "./html.ts";

const styles = `
  :root { color-scheme: light dark; --accent: #2f5fd0; --muted: #6b7280; --card: #ffffff; --bg: #f3f4f6; --fg: #111827; }
  @media (prefers-color-scheme: dark) { :root { --card: #1f2430; --bg: #12151c; --fg: #e5e7eb; --muted: #9ca3af; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
  main { max-width: 28rem; margin: 8vh auto; padding: 2rem; background: var(--card); border-radius: 12px;
         box-shadow: 0 1px 3px rgba(0,0,0,.12), 0 8px 24px rgba(0,0,0,.06); }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  .brand { font-weight: 700; letter-spacing: .04em; color: var(--accent); margin-bottom: 1.5rem; }
  .muted { color: var(--muted); font-size: .9rem; }
  code { font-size: .85rem; word-break: break-all; }
`;

/** The frame every server-rendered page shares. */
export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · shomei</title>
<style>${new Html(styles)}</style>
</head>
<body><main><div class="brand">shomei</div>${body}</main></body>
</html>`.value;
}
