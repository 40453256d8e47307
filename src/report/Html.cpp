#include "report/Html.h"

#include <fmt/format.h>

namespace tlc::report {

std::string esc(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// Hues a golden angle apart: neighbouring warps never look alike, whatever the count.
std::string warpColour(int64_t w, int64_t count) {
    (void)count;
    int hue = int((w * 137) % 360);
    return fmt::format("hsl({},70%,78%)", hue);
}

std::string bankColour(int64_t bank, int64_t banks) {
    int hue = banks > 0 ? int(bank * 360 / banks) : 0;
    return fmt::format("hsl({},60%,80%)", hue);
}

std::string kindColour(const std::string& kind) {
    if (kind == "copy" || kind == "tma" || kind == "cp.async") return "#9ecae1";
    if (kind == "gemm") return "#fdae6b";
    if (kind == "reduce" || kind == "cumsum") return "#a1d99b";
    if (kind == "fill" || kind == "clear") return "#dadaeb";
    if (kind == "parallel") return "#fdd0a2";
    if (kind == "wait" || kind == "barrier") return "#fc9272";
    return "#d9d9d9";
}

std::string fmtBytes(int64_t bytes) {
    if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB ({} B)", bytes / 1024, bytes);
    if (bytes >= 1024) return fmt::format("{:.1f} KiB ({} B)", double(bytes) / 1024.0, bytes);
    return fmt::format("{} B", bytes);
}

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

std::string section(const std::string& id, const std::string& title, const std::string& body, bool open) {
    return fmt::format("<details class=\"sec\" id=\"{}\"{}><summary>{}</summary>\n<div class=\"body\">\n{}</div>\n"
                       "</details>\n",
                       id, open ? " open" : "", esc(title), body);
}

std::string pageStyle() {
    return R"CSS(
:root { --fg: #1d1d1f; --muted: #666; --line: #ddd; --hl: #fff3a3; --bg2: #f6f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
header { position: sticky; top: 0; z-index: 5; background: #23395d; color: #fff; padding: 6px 14px;
         display: flex; gap: 14px; align-items: center; }
header h1 { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 45vw; }
header h1 { font-size: 16px; margin: 0; }
header nav { flex: 1 1 0; min-width: 0; overflow-x: auto; white-space: nowrap; }
header nav a { color: #cfe0ff; margin-right: 10px; }
header button { font: inherit; }
main { padding: 8px 14px 40px; max-width: 1800px; }
section.kernel { border-top: 3px solid #23395d; margin-top: 14px; }
section.kernel > h2 { font-size: 18px; margin: 8px 0; }
details.sec { border: 1px solid var(--line); border-radius: 4px; margin: 8px 0; }
details.sec > summary { cursor: pointer; padding: 5px 8px; background: var(--bg2); font-weight: 600; }
details.sec > .body { padding: 8px; overflow-x: auto; }
.muted { color: var(--muted); }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: var(--bg2); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12px; }
.panes { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); gap: 8px; }
@media (max-width: 900px) { .panes { grid-template-columns: minmax(0, 1fr); } }
.pane { border: 1px solid var(--line); max-height: 70vh; overflow: auto; }
.pane h3 { position: sticky; top: 0; margin: 0; padding: 3px 6px; font-size: 13px; background: var(--bg2);
           border-bottom: 1px solid var(--line); }
.ln { white-space: pre; padding: 0 6px 0 0; }
.ln .no { display: inline-block; width: 4.5em; text-align: right; padding-right: 8px; color: #999; user-select: none; }
.ln a.no { color: #2a62c9; text-decoration: none; }
.ln.mapped { background: #f3f8ff; }
.ln.hl { background: var(--hl); }
.scroll { max-height: 70vh; overflow: auto; border: 1px solid var(--line); }
.grids { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
figure { margin: 0; min-width: 0; max-width: 100%; }
figcaption { font-size: 12px; color: var(--muted); max-width: 900px; }
svg .cell rect, svg .bank rect { stroke: #fff; }
svg .cell text, svg .bank text { font-size: 9px; text-anchor: middle; }
svg .cell text.r { font-size: 8px; fill: #444; }
svg .bank text { font-size: 8px; }
svg text { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.bar { height: 14px; background: #6baed6; display: inline-block; vertical-align: middle; }
.warn { color: #a33; }
)CSS";
}

// Collapsing and line highlighting; written here, nothing loaded.
std::string pageScript() {
    return R"JS(
(function () {
  function highlight(pane, attr, value) {
    var old = document.querySelectorAll('.ln.hl');
    for (var i = 0; i < old.length; i++) old[i].classList.remove('hl');
    if (!pane) return null;
    var hits = pane.querySelectorAll('.ln[' + attr + '="' + value + '"]');
    for (var j = 0; j < hits.length; j++) hits[j].classList.add('hl');
    return hits.length ? hits[0] : null;
  }
  document.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('a.no') : null;
    if (!a) return;
    var line = a.parentNode;
    var kernel = line.getAttribute('data-k');
    if (line.hasAttribute('data-line')) {
      var out = document.getElementById(kernel + '-out');
      var first = highlight(out, 'data-src', line.getAttribute('data-line'));
      line.classList.add('hl');
      if (first) { first.scrollIntoView({block: 'center'}); ev.preventDefault(); }
    } else if (line.hasAttribute('data-src')) {
      var src = document.getElementById(kernel + '-src');
      var hit = highlight(src, 'data-line', line.getAttribute('data-src'));
      line.classList.add('hl');
      if (hit) { hit.scrollIntoView({block: 'center'}); ev.preventDefault(); }
    }
  });
  function setAll(open) {
    var all = document.querySelectorAll('details');
    for (var i = 0; i < all.length; i++) all[i].open = open;
  }
  var e = document.getElementById('expand-all'), c = document.getElementById('collapse-all');
  if (e) e.addEventListener('click', function () { setAll(true); });
  if (c) c.addEventListener('click', function () { setAll(false); });
})();
)JS";
}

} // namespace tlc::report
