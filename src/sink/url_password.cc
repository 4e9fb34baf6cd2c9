#include "sink/url_password.h"

#include "neardup/result_sink.h"

namespace neardup::internal {

std::vector<std::string_view> UrlPasswords(std::string_view url) {
  std::vector<std::string_view> spans;
  const size_t scheme_end = url.find("://");
  const size_t query = url.find('?');
  // user-info: up to the last '@' before the query. Taking the last one
  // over-redacts odd URLs rather than leave a password with an '@' in it.
  if (scheme_end != std::string_view::npos && scheme_end < query) {
    const size_t start = scheme_end + 3;
    const size_t at = url.substr(0, query).rfind('@');
    if (at != std::string_view::npos && at >= start) {
      const size_t colon = url.find(':', start);
      if (colon < at && at > colon + 1) spans.push_back(url.substr(colon + 1, at - colon - 1));
    }
  }
  constexpr std::string_view kPassword = "password=";
  for (size_t position = query; position < url.size();) {
    const size_t key = position + 1;
    const size_t next = url.find('&', key);
    const size_t end = next == std::string_view::npos ? url.size() : next;
    if (url.substr(key, kPassword.size()) == kPassword && end > key + kPassword.size()) {
      spans.push_back(url.substr(key + kPassword.size(), end - key - kPassword.size()));
    }
    position = next;
  }
  return spans;
}

std::string PercentDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace neardup::internal

namespace neardup {

std::string RedactUrlPassword(std::string_view url) {
  std::string out;
  size_t copied = 0;
  for (std::string_view span : internal::UrlPasswords(url)) {
    const size_t begin = static_cast<size_t>(span.data() - url.data());
    out.append(url.substr(copied, begin - copied));
    out.append("***");
    copied = begin + span.size();
  }
  out.append(url.substr(copied));
  return out;
}

}  // namespace neardup
