/** The names of the mock environment's demo client and user, which the demo seed creates and the mock pages hint at. */
export const demoClientId = "demo-client";
export const demoPublicClientId = "demo-mobile";
export const demoLogin = "demo";
export const demoPassword = "demo-password";
/** The demo user's name in Japanese and its kana reading, returned for claims_locales=ja (docs/oidc-decisions.md). */
export const demoLocalizedNames = [
  { tag: "ja", value: "見本 太郎" },
  { tag: "ja-Kana-JP", value: "ミホン タロウ" },
];
