// Evaluated in the page by test/e2e/web.test.ts: what a person using a keyboard, a screen reader
// or weak eyes would miss in the view shown. Plain browser JavaScript, evaluated as an expression.
(() => {
  const rgb = (text) => (text.match(/[\d.]+/g) ?? []).map(Number);
  const luminance = ([r = 0, g = 0, b = 0]) => {
    const [R, G, B] = [r, g, b].map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  // The first background that is not transparent, from the element up.
  const background = (element) => {
    for (let e = element; e !== null; e = e.parentElement) {
      const colour = rgb(getComputedStyle(e).backgroundColor);
      if (colour.length === 3 || colour[3] > 0) return colour;
    }
    return [255, 255, 255];
  };
  const visible = (element) => element.getClientRects().length > 0;
  // Controls a screen reader could not name: no label, no aria-label, no text.
  const unnamed = [...document.querySelectorAll('input, select, textarea, button, a')]
    .filter((e) => visible(e) && (e.labels?.length ?? 0) === 0 && !e.getAttribute('aria-label') && (e.textContent ?? '').trim() === '')
    .map((e) => e.outerHTML);
  // Text whose colour contrasts less than 4.5:1 with what is behind it (WCAG AA).
  const lowContrast = [];
  for (const element of document.querySelectorAll('body *')) {
    const ownText = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && (node.textContent ?? '').trim() !== '');
    if (!ownText || !visible(element)) continue;
    const style = getComputedStyle(element);
    if (style.opacity !== '1') continue; // a disabled button
    const [a, b] = [luminance(rgb(style.color)), luminance(background(element))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) lowContrast.push(`${element.tagName.toLowerCase()}.${element.className}: ${ratio.toFixed(2)} "${(element.textContent ?? '').trim().slice(0, 30)}"`);
  }
  return { unnamed, lowContrast };
})()
