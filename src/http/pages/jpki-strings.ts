/**
 * Every word the JPKI pages show (step-up and sign-in with a card, linking
 * a certificate, the mock card), in one place so that they can be translated
 * as a set. Messages about why a signature was refused come from the domain
 * (JpkiError) and are shown as they are.
 */
export const jpkiStrings = {
  stepUpTitle: "Confirm it's you with your My Number card",
  stepUpLead: (clientName: string, level: string) => ({ before: "", client: clientName, after: ` asks you to confirm it's you by signing with your My Number card (level: ${level}).` }),
  signatureCertificateNeeded: "Use your signature certificate (署名用電子証明書).",
  userAuthenticationCertificateNeeded: "Use your user authentication certificate (利用者証明用電子証明書) or your signature certificate.",
  signedInAs: "Signed in as",
  reasonsIntro: "This is needed because:",
  signInTitle: "Sign in with your My Number card",
  signInLead: (clientName: string) => ({ before: "Sign in to continue to ", client: clientName, after: " by signing with your My Number card." }),
  signInWithCard: "Sign in with your My Number card instead",
  linkTitle: "Your My Number card certificates",
  linkLead: "Link a certificate of your My Number card to your account to sign in and confirm it's you with the card.",
  linkedCaption: "Linked certificates",
  noLinks: "No certificate is linked yet.",
  linkHeading: "Link a certificate",
  linked: "The certificate is linked to your account.",
  signInFirst: "Sign in first, then come back to this page to link a certificate.",
  typeColumn: "Certificate",
  linkedAtColumn: "Linked",
  statusColumn: "Status",
  statusGood: "Valid",
  statusRevoked: "Revoked",
  statusExpired: "Expired",
  certificateTypes: {
    jpki_card_digital_signature: "Signature certificate (card)",
    jpki_card_user_authentication: "User authentication certificate (card)",
    jpki_mobile_digital_signature: "Signature certificate (smartphone)",
    jpki_mobile_user_authentication: "User authentication certificate (smartphone)",
  } as Record<string, string>,
  howTo: "Sign the text below with your signing app. It gives you your certificate and a signature: paste both here.",
  challengeLabel: "Text to sign",
  challengeHint: "Valid for 5 minutes and for one attempt. The app signs its SHA-256 digest (RSA PKCS#1 v1.5).",
  certificateLabel: "Certificate",
  certificateHint: "PEM, or base64 of the DER certificate.",
  signatureLabel: "Signature",
  signatureHint: "base64.",
  submit: "Continue",
  linkSubmit: "Link certificate",
  mockTitle: "Mock environment",
  mockIntro: "This account holds a mock My Number card. Sign with it here, or with openssl:",
  mockSign: "Sign with the mock card",
  mockFailed: "The mock card could not sign in this browser. Use the openssl command instead.",
  mockOpensslIntro: "Save the key below as mock-card.key, then run this and paste the result as the signature:",
  mockKeySummary: "The mock card's key and certificate",
  mockCertificateIdentity: (certificateId: string, accountName: string) =>
    `Its certificate is ${certificateId} in the API account "${accountName}": revoke it with SetMockCertificateStatus to see a step-up refused.`,
  formExpired: "the form has expired or did not come from this site. Go back, reload the page and try again.",
} as const;
