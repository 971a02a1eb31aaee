import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";

/** One RPC as a client calls it. */
export interface Procedure {
  /** "/package.Service/Method" */
  path: string;
  service: DescService;
  method: DescMethod;
  /** Declared free of side effects, so Connect also serves it over GET. */
  getAllowed: boolean;
}

const genRoot = fileURLToPath(new URL("../../gen", import.meta.url));

function generatedFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return generatedFiles(full);
    return entry.name.endsWith("_pb.ts") ? [full] : [];
  });
}

/**
 * Every unary procedure of every service descriptor in gen/, found by loading
 * the generated modules rather than from a list, so a new RPC is covered as
 * soon as it is generated.
 */
export async function generatedProcedures(): Promise<Procedure[]> {
  const procedures: Procedure[] = [];
  for (const file of generatedFiles(genRoot).sort()) {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      const service = value as Partial<DescService>;
      if (service?.kind !== "service" || !service.methods) continue;
      // A streaming call with good input never ends, so it cannot be judged by its complete answer; the
      // streaming procedures' bad input is tested by their own files (certificate-events.test.ts).
      for (const method of service.methods.filter((m) => m.methodKind === "unary")) {
        procedures.push({
          path: `/${service.typeName}/${method.name}`,
          service: service as DescService,
          method,
          getAllowed: method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
        });
      }
    }
  }
  return procedures;
}
