import { defineConfig } from "@playwright/test";

// One port per run, chosen once: workers load this file again and inherit the environment set here.
process.env.CART_PAGE_PORT ??= String(20000 + Math.floor(Math.random() * 40000));
const port = Number(process.env.CART_PAGE_PORT);
const baseURL = `http://127.0.0.1:${port}`;

export default defineConfig({
  testDir: "tests",
  timeout: 10_000,
  expect: { timeout: 2_000 },
  retries: 0,
  workers: 1,
  reporter: "list",
  use: {
    baseURL,
    browserName: "chromium",
    launchOptions: {
      // The system's Chromium: no browser is downloaded.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  webServer: {
    command: `python3 -m http.server ${port} --bind 127.0.0.1 --directory public`,
    url: baseURL,
    reuseExistingServer: false,
    stderr: "ignore", // http.server logs every request there
    timeout: 10_000,
  },
});
