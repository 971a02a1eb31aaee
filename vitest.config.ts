import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup/build.ts", "test/setup/postgres-schemas.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
    // The tests within each file run in a shuffled order, so that a test leaning on what another left behind
    // fails instead of passing by luck. Vitest prints the seed ("Running tests with seed …"), and
    // `--sequence.seed=<seed>` repeats that order. Files keep vitest's own order (the slowest known first).
    sequence: { shuffle: { files: false, tests: true } },
  },
});
