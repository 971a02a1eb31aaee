import { create } from "@bufbuild/protobuf";
import {
  CertificateContentSchema,
  JpkiDigitalSignatureContent_Gender as ProtoGender,
  JpkiDigitalSignatureContentSchema,
  JpkiUserAuthenticationContentSchema,
  type CertificateContent as ContentMessage,
  type JpkiDigitalSignatureContent,
} from "../../gen/service/verify/v2/certificate_content_pb.ts";
import type { Gender, JpkiFacts } from "../domain/certificates/jpki-facts.ts";
import { invalidField } from "../domain/errors.ts";
import type { CertificateContent } from "../domain/verification/model.ts";

/** Certificate content between the domain and protobuf: one oneof case per certificate type. */

const genders: Record<Gender, ProtoGender> = { male: ProtoGender.MALE, female: ProtoGender.FEMALE, not_known: ProtoGender.NOT_KNOWN };

function factsMessage(facts: JpkiFacts): JpkiDigitalSignatureContent {
  return create(JpkiDigitalSignatureContentSchema, {
    name: facts.name,
    nameSubstituteCharacters: facts.nameSubstituteCharacters,
    dateOfBirth: facts.dateOfBirth,
    gender: facts.gender ? genders[facts.gender] : ProtoGender.UNSPECIFIED,
    address: facts.address,
    addressSubstituteCharacters: facts.addressSubstituteCharacters,
  });
}

export function contentMessage(content: CertificateContent): ContentMessage {
  const facts = () => factsMessage(content.facts ?? { name: "", nameSubstituteCharacters: "", dateOfBirth: "", gender: undefined, address: "", addressSubstituteCharacters: "" });
  const none = () => create(JpkiUserAuthenticationContentSchema, {});
  switch (content.type) {
    case "jpki_card_digital_signature":
      return create(CertificateContentSchema, { content: { case: "jpkiCardDigitalSignature", value: facts() } });
    case "jpki_mobile_digital_signature":
      return create(CertificateContentSchema, { content: { case: "jpkiMobileDigitalSignature", value: facts() } });
    case "jpki_card_user_authentication":
      return create(CertificateContentSchema, { content: { case: "jpkiCardUserAuthentication", value: none() } });
    case "jpki_mobile_user_authentication":
      return create(CertificateContentSchema, { content: { case: "jpkiMobileUserAuthentication", value: none() } });
  }
}

/** A person given to CreateMockCertificate; empty fields are left to the mock. */
export function personFrom(message: JpkiDigitalSignatureContent | undefined): Partial<JpkiFacts> | undefined {
  if (!message) return undefined;
  let gender: Gender | undefined;
  if (message.gender !== ProtoGender.UNSPECIFIED) {
    gender = (Object.keys(genders) as Gender[]).find((g) => genders[g] === message.gender);
    if (!gender) throw invalidField("person.gender", `person.gender ${message.gender} is not a gender code`);
  }
  return {
    name: message.name,
    nameSubstituteCharacters: message.nameSubstituteCharacters,
    dateOfBirth: message.dateOfBirth,
    gender,
    address: message.address,
    addressSubstituteCharacters: message.addressSubstituteCharacters,
  };
}
