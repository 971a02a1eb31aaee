import { Html } from "./html.ts";

/**
 * A QR code as inline SVG, made here (no image from elsewhere, nothing for
 * the page's policy to allow): dark modules on a light square with the
 * quiet zone the standard asks for, whatever the page's colour scheme, so a
 * phone's camera reads it in dark mode too. Level M survives a smudged or
 * glare-struck screen.
 */
export async function qrCodeSvg(text: string, label: string): Promise<Html> {
  // Loaded on first use: only the phone sign-in page draws one, and the library (with its PNG encoder) was
  // some sixty modules of every start.
  const { default: QRCode } = await import("qrcode");
  const svg = await QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 4, color: { dark: "#000000ff", light: "#ffffffff" } });
  // The library's SVG is markup of its own making around path data; it gets a role and a name for screen readers.
  return new Html(svg.replace("<svg ", `<svg role="img" aria-label="${label.replace(/[&<>"']/g, "")}" `));
}
