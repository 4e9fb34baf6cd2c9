// Where a connection URL holds passwords: the password of its user-info
// part (scheme://user:PASSWORD@host) and every password=... query
// parameter. RedactUrlPassword replaces these spans; the PostgreSQL sink
// also removes their decoded forms from every message it returns.
// Thread safety: pure functions.
#ifndef NEARDUP_SINK_URL_PASSWORD_H_
#define NEARDUP_SINK_URL_PASSWORD_H_

#include <string>
#include <string_view>
#include <vector>

namespace neardup::internal {

// The password spans of `url`, as views into it, in order; empty ones left out.
std::vector<std::string_view> UrlPasswords(std::string_view url);

// `text` with %XX sequences decoded (others kept as they are).
std::string PercentDecode(std::string_view text);

}  // namespace neardup::internal

#endif  // NEARDUP_SINK_URL_PASSWORD_H_
