// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";

import { renderCartBadge } from "./cartBadge";

function badgeFor(count: number): HTMLElement {
  const badge = document.createElement("span");
  renderCartBadge(badge, count);
  return badge;
}

describe("cart badge", () => {
  it("shows the singular for one item", () => {
    expect(badgeFor(1).textContent).toBe("1 item");
  });

  it("shows the plural for an empty cart", () => {
    const badge = badgeFor(0);
    expect(badge.textContent).toBe("0 items");
    expect(badge.dataset.empty).toBe("true");
  });

  it("shows the plural for several items", () => {
    expect(badgeFor(3).textContent).toBe("3 items");
  });
});
