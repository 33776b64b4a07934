"""The report page's styles: a two-column grid of answers on a wide screen, one column on a phone,
and a print layout without navigation or split figures. Shades carry a text twin (the ratio)."""

STYLE = """
:root { --ink: #1d1d1f; --muted: #555; --line: #d0d4da; --agrees: #ffffff; --near: #fde9b8;
  --departs: #f7b7a3; --note: #e8f0fb; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0 auto; padding: 0.75rem 1.25rem 2rem; max-width: 80rem; }
h1 { font-size: 1.45rem; margin: 0.2rem 0; }
p, li { overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 0 0 0.3rem; }
p.run { margin: 0.2rem 0; color: var(--muted); font-size: 0.85rem; }
nav ol { list-style: none; padding: 0; margin: 0.3rem 0 0.6rem; display: flex; flex-wrap: wrap;
  gap: 0.2rem 0.9rem; font-size: 0.85rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.answers { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0.8rem; }
.answer { border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; }
.answer p { margin: 0.25rem 0; font-size: 0.9rem; }
.answer p.short { font-weight: 600; }
.answer p.caveat { background: var(--note); padding: 0.2rem 0.4rem; border-radius: 4px; font-size: 0.82rem; }
figure { margin: 0.4rem 0; }
figcaption { font-size: 0.78rem; color: var(--muted); }
img { max-width: 100%; height: auto; display: block; }
img.wide { border: 1px solid var(--line); }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.4rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.82rem; }
caption { text-align: left; font-size: 0.8rem; font-weight: 600; padding: 0.2rem 0; caption-side: top;
  white-space: nowrap; }
p.caption { font-size: 0.8rem; color: var(--muted); margin: 0.6rem 0 0; }
table.comparison th[scope="row"], table.comparison thead th:first-child { position: sticky; left: 0;
  background: #fff; z-index: 1; }
table.comparison thead th:first-child { background: #f3f4f6; }
th, td { padding: 0.2rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { text-align: left; background: #f3f4f6; }
tbody th { text-align: left; font-weight: normal; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.comparison td { text-align: right; font-variant-numeric: tabular-nums; min-width: 6.5rem; }
table.comparison span { display: block; }
table.comparison .v { font-weight: 600; }
table.comparison .r, table.comparison .i, table.comparison .was { font-size: 0.72rem; color: var(--muted); }
table.comparison .was.beyond { color: var(--ink); font-weight: 600; }
td.near { background: var(--near); }
td.departs { background: var(--departs); }
td.hindered { background: var(--note); }
td.interference { outline: 2px dashed #1f5fa8; outline-offset: -3px; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 34rem), 1fr)); gap: 0.6rem; }
tr.beyond-noise { font-weight: 600; }
li.failure strong { color: #b00020; } li.departure strong { color: #8a5a00; }
li.interference strong { color: #1f5fa8; }
@media (max-width: 48rem) {
  body { padding: 0.5rem 0.6rem 1.5rem; font-size: 14px; }
  .answers { grid-template-columns: 1fr; }
  h1 { font-size: 1.2rem; }
  table.comparison th[scope="row"] { white-space: normal; min-width: 7rem; max-width: 8.5rem; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .answers { grid-template-columns: 1fr 1fr; }
  .answer, figure, tr { break-inside: avoid; }
  h2 { break-after: avoid; }
  .scroll { overflow: visible; }
  td.near, td.departs, thead th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""
