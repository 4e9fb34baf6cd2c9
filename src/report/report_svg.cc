#include "report/report_svg.h"

#include <algorithm>
#include <cstdio>

#include "report/report_text.h"

namespace neardup::internal {
namespace {

std::string Fixed2(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

}  // namespace

std::vector<PlotBar> ScoreBins(std::span<const double> scores, int bins) {
  std::vector<PlotBar> bars(static_cast<size_t>(bins));
  for (int i = 0; i < bins; ++i) {
    bars[i].label = Fixed2(static_cast<double>(i) / bins) + "-" + Fixed2((i + 1.0) / bins);
  }
  for (double score : scores) {
    int bin = static_cast<int>(score * bins);
    bin = std::clamp(bin, 0, bins - 1);
    ++bars[bin].count;
  }
  return bars;
}

std::vector<PlotBar> ClusterSizeBars(std::span<const uint64_t> sizes) {
  constexpr uint64_t kLargest = 15;
  std::vector<PlotBar> bars;
  for (uint64_t size = 2; size <= kLargest; ++size) bars.push_back({std::to_string(size), 0});
  PlotBar larger{std::to_string(kLargest + 1) + "+", 0};
  for (uint64_t size : sizes) {
    if (size < 2) continue;
    if (size > kLargest) {
      ++larger.count;
    } else {
      ++bars[size - 2].count;
    }
  }
  if (larger.count > 0) bars.push_back(larger);
  // No empty tail: the largest cluster size sets the axis.
  while (bars.size() > 1 && bars.back().count == 0) bars.pop_back();
  return bars;
}

std::string BarChartSvg(std::string_view id, std::string_view title, std::string_view x_caption,
                        const std::vector<PlotBar>& bars) {
  constexpr int kWidth = 420, kHeight = 220, kLeft = 44, kRight = 8, kTop = 28, kBottom = 44;
  const int plot_width = kWidth - kLeft - kRight;
  const int plot_height = kHeight - kTop - kBottom;
  uint64_t top = 1;
  for (const PlotBar& bar : bars) top = std::max(top, bar.count);
  std::string svg;
  svg += "<svg id=\"";
  AppendHtmlEscaped(&svg, id);
  svg += "\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         std::to_string(kWidth) + " " + std::to_string(kHeight) + "\" role=\"img\">";
  svg += "<text class=\"plot-title\" x=\"" + std::to_string(kWidth / 2) +
         "\" y=\"16\" text-anchor=\"middle\">";
  AppendHtmlEscaped(&svg, title);
  svg += "</text>";
  // The y axis: 0 and the largest count.
  svg += "<line class=\"axis\" x1=\"" + std::to_string(kLeft) + "\" y1=\"" +
         std::to_string(kTop + plot_height) + "\" x2=\"" + std::to_string(kLeft + plot_width) +
         "\" y2=\"" + std::to_string(kTop + plot_height) + "\"/>";
  svg += "<text class=\"tick\" x=\"" + std::to_string(kLeft - 4) + "\" y=\"" +
         std::to_string(kTop + 8) + "\" text-anchor=\"end\">" + std::to_string(top) + "</text>";
  svg += "<text class=\"tick\" x=\"" + std::to_string(kLeft - 4) + "\" y=\"" +
         std::to_string(kTop + plot_height) + "\" text-anchor=\"end\">0</text>";
  // At least 8 slots, so that one or two bars are not a wall of colour.
  const double slot = static_cast<double>(plot_width) / std::max<size_t>(bars.size(), 8);
  // Label every bar when they fit, else every k-th.
  const size_t label_every = std::max<size_t>(1, (bars.size() * 34 + plot_width - 1) / plot_width);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double height = static_cast<double>(bars[i].count) / top * plot_height;
    const double x = kLeft + i * slot;
    svg += "<rect class=\"bar\" x=\"" + Fixed2(x + 1) + "\" y=\"" +
           Fixed2(kTop + plot_height - height) + "\" width=\"" + Fixed2(std::max(1.0, slot - 2)) +
           "\" height=\"" + Fixed2(height) + "\"><title>";
    AppendHtmlEscaped(&svg, bars[i].label);
    svg += ": " + std::to_string(bars[i].count) + "</title></rect>";
    if (i % label_every == 0) {
      svg += "<text class=\"tick\" x=\"" + Fixed2(x + slot / 2) + "\" y=\"" +
             std::to_string(kTop + plot_height + 14) + "\" text-anchor=\"middle\">";
      // Score bins are labelled by their lower edge, to fit.
      std::string_view label = bars[i].label;
      AppendHtmlEscaped(&svg, label.substr(0, label.find('-')));
      svg += "</text>";
    }
  }
  svg += "<text class=\"caption\" x=\"" + std::to_string(kLeft + plot_width / 2) + "\" y=\"" +
         std::to_string(kHeight - 6) + "\" text-anchor=\"middle\">";
  AppendHtmlEscaped(&svg, x_caption);
  svg += "</text></svg>";
  return svg;
}

}  // namespace neardup::internal
