import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The checkpointer validation suite calls describe/it/beforeAll as globals (Jest style).
    globals: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
