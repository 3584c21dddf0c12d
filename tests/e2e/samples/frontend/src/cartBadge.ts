/** The cart badge in the shop's header: "1 item", "3 items", "0 items". */

export function itemCountLabel(count: number): string {
  const noun = count > 1 ? "items" : "item";
  return `${count} ${noun}`;
}

export function renderCartBadge(badge: HTMLElement, count: number): void {
  badge.textContent = itemCountLabel(count);
  badge.dataset.empty = String(count === 0);
}
