// The plots of the HTML report as inline SVG, drawn here rather than by the
// page's script so they show even with scripting off and are tested as
// text. Each bar carries a <title> "LABEL: COUNT" (the tooltip, and what the
// browser test reads back).
// Cost: O(values + bars). Thread safety: pure functions.
#ifndef NEARDUP_REPORT_REPORT_SVG_H_
#define NEARDUP_REPORT_REPORT_SVG_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::internal {

struct PlotBar {
  std::string label;
  uint64_t count = 0;
};

// Scores in [0, 1] counted in `bins` equal bins, the last closed ("0.95-1").
// REQUIRES: bins >= 1; scores finite (values outside [0, 1] go to the end bins).
std::vector<PlotBar> ScoreBins(std::span<const double> scores, int bins);

// Cluster sizes 2 .. 15 one bar each, then one "16+" bar (only when used).
std::vector<PlotBar> ClusterSizeBars(std::span<const uint64_t> sizes);

// A bar chart with a title and an x-axis caption; `id` becomes the <svg>'s id.
// Labels and captions are escaped.
std::string BarChartSvg(std::string_view id, std::string_view title, std::string_view x_caption,
                        const std::vector<PlotBar>& bars);

}  // namespace neardup::internal

#endif  // NEARDUP_REPORT_REPORT_SVG_H_
