// RenderReportIndex: the live service's list of report pages (/ui/).
#include <string>
#include <string_view>

#include "neardup/report.h"
#include "report/report_text.h"

namespace neardup {
namespace {

using internal::AppendHtmlEscaped;
using internal::IsLocalPath;

constexpr std::string_view kHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}
h1{font-size:1.4em}.note{color:#555}
section{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}
h2{font-size:1.1em;margin:.2em 0}dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:.4em 0}
dt{color:#555}dd{margin:0;font-variant-numeric:tabular-nums}
</style>
)";

}  // namespace

std::string RenderReportIndex(std::string_view title, std::string_view note,
                              const std::vector<ReportIndexEntry>& entries) {
  std::string out(kHead);
  out += "<title>";
  AppendHtmlEscaped(&out, title);
  out += "</title></head><body>\n<h1>";
  AppendHtmlEscaped(&out, title);
  out += "</h1>\n<p class=\"note\">";
  AppendHtmlEscaped(&out, note);
  out += "</p>\n";
  for (const ReportIndexEntry& entry : entries) {
    out += "<section><h2>";
    const bool link = IsLocalPath(entry.href);
    if (link) {
      out += "<a href=\"";
      AppendHtmlEscaped(&out, entry.href);
      out += "\">";
    }
    AppendHtmlEscaped(&out, entry.name);
    if (link) out += "</a>";
    out += "</h2><dl>";
    for (const auto& [label, value] : entry.facts) {
      out += "<dt>";
      AppendHtmlEscaped(&out, label);
      out += "</dt><dd>";
      AppendHtmlEscaped(&out, value);
      out += "</dd>";
    }
    out += "</dl></section>\n";
  }
  if (entries.empty()) out += "<p>Nothing here.</p>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace neardup
