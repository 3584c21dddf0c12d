import { expect, test } from "@playwright/test";

test("the cart starts empty", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator("#count")).toHaveText("0");
  await expect(page.locator("#total")).toHaveText("$0.00");
});

test("adding products updates the count and the total", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("button", { name: "Add apple" }).click();
  await page.getByRole("button", { name: "Add pear" }).click();
  await expect(page.locator("#count")).toHaveText("2");
  await expect(page.locator("#total")).toHaveText("$3.50");
});
