/**
 * Routes whose path carries a secret (a signing request's id is the app's
 * capability to answer it): request lines name the route pattern instead of
 * the path, so the id never reaches a log.
 */
export const routesWithSecretPaths: ReadonlySet<string> = new Set(["/api/jpki/v1/sign-requests/:id", "/auth/jpki/sign-requests/:id"]);
