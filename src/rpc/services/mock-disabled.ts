import type { ServiceImpl } from "@connectrpc/connect";
import type { MockService } from "../../../gen/service/verify/v2/mock_service_pb.ts";
import { DomainError } from "../../domain/errors.ts";

/**
 * MockService where no mock environment is installed (production mode): every
 * call says the mock environment is off. The mock extension registers its own
 * implementation in place of this one (see rpcServices).
 */
export class DisabledMockHandler implements ServiceImpl<typeof MockService> {
  createMockCertificate(): never {
    throw disabled();
  }
  setMockCertificateStatus(): never {
    throw disabled();
  }
}

function disabled(): DomainError {
  return new DomainError("mock_environment_disabled", "the mock environment is off: this server runs in production mode");
}
