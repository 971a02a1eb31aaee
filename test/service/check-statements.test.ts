import { Code } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import type { Kysely } from "kysely";
import type { Tables } from "../../src/storage/schema.ts";
import {
  bearer,
  certificateServicePath,
  clients,
  createTenant,
  expectRpcError,
  postJson,
  protocols,
  setupClients,
  type Clients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const targets = await databaseTargets();

/**
 * Records each statement the server sends as its verb and the tables it
 * names ("select certificates"): what a call costs
 * the database, one entry per round trip on PostgreSQL.
 */
class StatementLog implements KyselyPlugin {
  readonly statements: string[] = [];
  private readonly summaries = new WeakMap<object, string>();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (!this.summaries.has(args.queryId)) this.summaries.set(args.queryId, summary(args.node));
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.statements.push(this.summaries.get(args.queryId) ?? "?");
    return args.result;
  }
}

type Named = { kind: string; node?: Named; table?: { identifier: { name: string } } };

/** A table reference's name, through an alias ("certificates as c"). */
function tableName(reference: Named | undefined): string | undefined {
  const table = reference?.kind === "AliasNode" ? reference.node : reference;
  return table?.kind === "TableNode" ? table.table?.identifier.name : undefined;
}

function summary(node: RootOperationNode): string {
  const n = node as unknown as { kind: string; from?: { froms: Named[] }; joins?: { table: Named }[]; into?: Named; table?: Named };
  const tables = [...(n.from?.froms ?? []), ...(n.joins ?? []).map((j) => j.table), n.into, n.kind === "UpdateQueryNode" ? n.table : undefined]
    .map(tableName)
    .filter((name) => name !== undefined);
  return `${n.kind.replace(/QueryNode$/, "").toLowerCase()} ${tables.join("+")}`;
}

/**
 * A check on a token this instance remembers, over any protocol: the auth version is read with the certificate and
 * confirms the caller. The mock source then reads the certificate's mock state through its own store, as any source
 * reads its own data (the certificate store knows nothing of the mock): a statement production mode does not send.
 */
const confirmedByRead = ["select certificates", "select mock_certificate_states", "insert certificate_statuses"];
/**
 * A failed check on a remembered token: the certificate with the version, the mock state the failure comes from (read by
 * the mock source, as above), then the token authenticated in full (a refused token must be answered as such).
 */
const failedThenAuthenticated = ["select certificates", "select mock_certificate_states", "select api_auth_version"];

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;
    let tenant: Tenant;
    let setup: Clients;
    let good: string;
    let revoked: string;
    let crlOnly: string;

    /** The statements the server sends while `call` runs (nothing else runs meanwhile: no sweeper, CRL held and not due). */
    async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
      const log = new StatementLog();
      const db: Kysely<Tables> = server.database.db;
      server.database.db = db.withPlugin(log);
      try {
        await call();
      } finally {
        server.database.db = db;
      }
      return log.statements;
    }

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock", sweepIntervalSeconds: 0 });
      h2 = new Http2SessionManager(server.url);
      tenant = await createTenant(server, "round-trips");
      setup = setupClients(server, tenant.token);
      const create = () => setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      [good, revoked, crlOnly] = (await Promise.all([create(), create(), create()])).map((r) => r.certificate!.id) as [string, string, string];
      await setup.mock.setMockCertificateStatus({ certificateId: revoked, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      await setup.mock.setMockCertificateStatus({ certificateId: crlOnly, status: Status.GOOD, offeredCheckMethods: [CheckMethod.CRL] });
      // The first check loads the mock CA's CRL and touches the token; later ones find both done.
      for (const certificateId of [good, revoked, crlOnly]) await setup.certificates.checkCertificateStatus({ certificateId });
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    it("a check over Connect JSON sends three statements: the certificate with the auth version, its mock state, the status record", async () => {
      let reply: { status: number; text: string } | undefined;
      const statements = await statementsOf(async () => {
        reply = await postJson(server, `${certificateServicePath}/CheckCertificateStatus`, JSON.stringify({ certificateId: good }), tenant.token);
      });
      expect(reply!.status).toBe(200);
      expect((JSON.parse(reply!.text) as { certificateStatus: { status: string } }).certificateStatus.status).toBe("STATUS_GOOD");
      expect(statements).toEqual(confirmedByRead);
    });

    for (const protocol of protocols) {
      const expected = confirmedByRead;
      it(`${protocol.name}: a revoked certificate's check sends the same ${expected.length} statements`, async () => {
        const api = clients(protocol.transport(server.url, [bearer(tenant.token)], h2));
        let status: Status | undefined;
        const statements = await statementsOf(async () => {
          status = (await api.certificates.checkCertificateStatus({ certificateId: revoked })).certificateStatus?.status;
        });
        expect(status).toBe(Status.REVOKED);
        expect(statements).toEqual(expected);
      });
    }

    it("the offered methods come from the certificate's mock state: OCSP refused for a CRL-only certificate, nothing written", async () => {
      const statements = await statementsOf(() =>
        expectRpcError(
          setup.certificates.checkCertificateStatus({ certificateId: crlOnly, checkMethod: CheckMethod.OCSP }),
          Code.FailedPrecondition,
          "ERROR_REASON_CHECK_METHOD_UNSUPPORTED",
          "check_method",
        ),
      );
      expect(statements).toEqual(failedThenAuthenticated);
    });
  });
}
