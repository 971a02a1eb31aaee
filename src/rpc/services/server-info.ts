import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  GetServerInfoResponseSchema,
  Mode,
  type ServerInfoService,
} from "../../../gen/service/verify/v2/server_info_pb.ts";
import { version } from "../../version.ts";

export class ServerInfoHandler implements ServiceImpl<typeof ServerInfoService> {
  constructor(
    private readonly mode: "mock" | "production",
    private readonly clock: () => Date = () => new Date(),
  ) {}

  getServerInfo() {
    return create(GetServerInfoResponseSchema, {
      name: "shomei",
      version,
      mode: this.mode === "mock" ? Mode.MOCK : Mode.PRODUCTION,
      serverTime: timestampFromDate(this.clock()),
    });
  }
}
