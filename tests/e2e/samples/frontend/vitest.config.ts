import { defineConfig } from "vitest/config";

export default defineConfig({
  // Vite's cache stays in the project (node_modules may be shared with other checkouts).
  cacheDir: ".vite",
  test: {
    include: ["src/**/*.test.ts"],
  },
});
