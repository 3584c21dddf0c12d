"""The HTML report's inline style sheet and script, and the Content-Security-Policy that allows exactly
these two (by their sha256) and nothing else: no network, no other script, even if some text escaped."""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff;
  --panel: #f6f8fa; --critical: #8b0000; --high: #cf222e; --medium: #9a6700; --low: #0969da;
  --found: #57606a; --fixed: #1a7f37; --introduced: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
header.page, main { max-width: 1100px; margin: 0 auto; padding: 0 20px; }
header.page { padding-top: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 4px; margin-top: 32px; }
.meta, .note, .empty { color: var(--muted); }
code, pre, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin: 0; }
.cards div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 12px; }
.cards dt { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.cards dd { margin: 2px 0 0; font-size: 20px; font-weight: 600; overflow-wrap: anywhere; }
.status-failed dd.status { color: var(--high); }
.chart { max-width: 100%; height: auto; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis, .chart .bar-label { font-size: 12px; fill: var(--muted); }
.chart .bar-label { fill: var(--fg); }
.bar-found { fill: var(--found); }
.bar-fixed { fill: var(--fixed); }
.bar-introduced { fill: var(--introduced); }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.numbers td { text-align: right; }
.filters { margin: 8px 0 12px; display: flex; gap: 16px; flex-wrap: wrap; }
.finding { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; margin: 12px 0;
  padding: 10px 14px; }
.finding.sev-critical { border-left-color: var(--critical); }
.finding.sev-high { border-left-color: var(--high); }
.finding.sev-medium { border-left-color: var(--medium); } .finding.sev-low { border-left-color: var(--low); }
.finding header { display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; }
.finding p { margin: 6px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.badge { color: #fff; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; }
.badge.sev-critical { background: var(--critical); } .badge.sev-high { background: var(--high); }
.badge.sev-medium { background: var(--medium); } .badge.sev-low { background: var(--low); }
.tags { color: var(--muted); font-size: 13px; }
table.code { width: 100%; border: 1px solid var(--line); background: var(--panel); table-layout: fixed; }
table.code td { border: 0; padding: 0 8px; white-space: pre; overflow-x: auto; tab-size: 4; }
table.code td.ln { width: 56px; text-align: right; color: var(--muted); user-select: none; }
table.code tr.flagged { background: #fff8c5; }
footer { max-width: 1100px; margin: 40px auto 24px; padding: 0 20px; color: var(--muted); font-size: 13px; }
"""

# Hides the remaining findings of the severities the reader unticks.
SCRIPT = """
(function () {
  "use strict";
  var boxes = document.querySelectorAll("input[data-severity]");
  function apply() {
    var shown = {};
    boxes.forEach(function (box) { shown[box.getAttribute("data-severity")] = box.checked; });
    document.querySelectorAll("article.finding").forEach(function (item) {
      item.hidden = shown[item.getAttribute("data-severity")] === false;
    });
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
})();
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src '{_sha256(STYLE)}'; script-src '{_sha256(SCRIPT)}'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
