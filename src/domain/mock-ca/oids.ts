/**
 * Object identifiers the mock profile writes.
 *
 * The JPKI card policies are the real ones from the J-LIS arc
 * 1.2.392.200149.8.5.1 (jpki-certificatePolicy): 1.1.20 is the signing
 * certificate's policy (digital signature, class 20) and 1.3.30 the user
 * authentication certificate's (authenticate, class 30). The real signing
 * profile marks certificatePolicies critical and carries a CPS qualifier; the
 * mock has no CPS, so it writes the policy without qualifiers.
 */
export const jpkiCardDigitalSignaturePolicyOid = "1.2.392.200149.8.5.1.1.20";
export const jpkiCardUserAuthenticationPolicyOid = "1.2.392.200149.8.5.1.3.30";

/**
 * The mock profile's own arc, for what could not be confirmed from public
 * J-LIS material: the smartphone certificates' policies. It is a UUID arc
 * (ITU-T X.667, "2.25.<uuid as an integer>") owned by this project, so it
 * cannot collide with a real JPKI identifier. These are NOT the real
 * smartphone policy OIDs.
 */
export const mockProfileArc = "2.25.306130024785527599992126293160258011149";
export const mockJpkiMobileDigitalSignaturePolicyOid = `${mockProfileArc}.1.1`;
export const mockJpkiMobileUserAuthenticationPolicyOid = `${mockProfileArc}.1.3`;
