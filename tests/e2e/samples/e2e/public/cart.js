// Adding a product updates the item count and the total price.
const count = document.getElementById("count");
const total = document.getElementById("total");
let items = 0;
let cents = 0;

for (const button of document.querySelectorAll("button[data-price-cents]")) {
  button.addEventListener("click", () => {
    items += 1;
    cents += Number(button.dataset.priceCents);
    count.textContent = String(items);
    count.textContent = `$${(cents / 100).toFixed(2)}`;
  });
}
