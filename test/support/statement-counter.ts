import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from "kysely";

/** The node kinds of statements that change rows. */
const writeKinds = new Set(["InsertQueryNode", "UpdateQueryNode", "DeleteQueryNode", "MergeQueryNode"]);

/**
 * Counts the statements executed through a connection it is plugged into
 * (`db.withPlugin(counter)`): each result passes through transformResult
 * once (transformQuery also sees subqueries as they are built, so it would
 * count a query with a subquery twice). `writes` counts those of them that
 * insert, update or delete; `statements` names each executed one in order
 * (its kind and table), for a failing assertion to show what ran.
 */
export class StatementCounter implements KyselyPlugin {
  count = 0;
  writes = 0;
  statements: string[] = [];
  /** The root node of each query, by its id: the last one seen for an id is the statement itself. */
  private readonly roots = new WeakMap<QueryId, RootOperationNode>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.roots.set(args.queryId, args.node);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count++;
    const root = this.roots.get(args.queryId);
    const kind = root?.kind ?? "unknown";
    if (writeKinds.has(kind)) this.writes++;
    this.statements.push(`${kind.replace(/QueryNode$|Node$/, "").toLowerCase()} ${tableOf(root)}`.trim());
    return args.result;
  }

  reset(): void {
    this.count = 0;
    this.writes = 0;
    this.statements = [];
  }
}

/** The table a statement names first, when it names one plainly. */
function tableOf(root: RootOperationNode | undefined): string {
  if (!root) return "";
  const node = root as unknown as Record<string, unknown>;
  const target = node.into ?? node.table ?? (node.from as { froms?: unknown[] } | undefined)?.froms?.[0];
  return identifierOf(target) ?? "";
}

function identifierOf(node: unknown): string | undefined {
  if (!node || typeof node !== "object") return undefined;
  const n = node as Record<string, unknown>;
  if (n.kind === "IdentifierNode") return n.name as string;
  for (const key of ["table", "identifier", "node"]) {
    const found = identifierOf(n[key]);
    if (found) return found;
  }
  return undefined;
}
