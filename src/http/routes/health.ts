import type { Router } from "express";
import type { Database } from "../../storage/database.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { Logger } from "../../observability/logger.ts";

export interface OperationsDependencies {
  database: Database;
  metrics: Metrics;
  logger: Logger;
  /** True once shutdown has begun: load balancers should stop sending traffic. */
  isDraining: () => boolean;
  /**
   * True until the work the process does after its port opens is done (in
   * mock mode, seeding the demo client, user and card): until then a client
   * that waited for readiness would meet a half-made service.
   */
  isStartingUp: () => boolean;
}

/** Liveness, readiness and metrics for orchestrators and Prometheus. */
export function registerOperationsRoutes(router: Router, deps: OperationsDependencies): void {
  router.get("/healthz", (_req, res) => {
    res.set("Cache-Control", "no-store").json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
    res.set("Cache-Control", "no-store");
    if (deps.isDraining()) {
      res.status(503).json({ status: "draining", checks: { database: "skipped" } });
      return;
    }
    if (deps.isStartingUp()) {
      res.status(503).json({ status: "starting", checks: { database: "skipped", startup: "pending" } });
      return;
    }
    try {
      await deps.database.ping(1000);
      res.json({ status: "ready", checks: { database: "ok" } });
    } catch (error) {
      deps.logger.warn({ err: error }, "readiness check: database unreachable");
      res.status(503).json({ status: "unavailable", checks: { database: "unreachable" } });
    }
  });

  router.get("/metrics", async (_req, res) => {
    res.set("Content-Type", deps.metrics.contentType).set("Cache-Control", "no-store").send(await deps.metrics.render());
  });
}
