// A throwaway PostgreSQL server for tests: initdb into a fresh temporary
// directory, started with pg_ctl on a unix socket only (no TCP port, so
// tests never collide with a system server or each other), password
// authentication (scram-sha-256) for its one superuser, fsync off; stopped
// and deleted at the end. It never touches a system cluster or service.
//
// initdb refuses to run as root: as root, the server runs as the `postgres`
// user (Debian's postgresql package creates it) through runuser. The server
// binaries are found in $NEARDUP_PG_BINDIR or the newest
// /usr/lib/postgresql/<version>/bin; when absent, Start() says so and the
// tests skip.
#ifndef NEARDUP_TESTS_POSTGRES_TEST_SERVER_H_
#define NEARDUP_TESTS_POSTGRES_TEST_SERVER_H_

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace neardup::testing {

class PostgresTestServer {
 public:
  static constexpr const char* kUser = "neardup_test";
  // Characters that must be percent-encoded in a URL, and a non-ASCII one.
  static constexpr const char* kPassword = "s3cr3t:p@ss/w\xC3\xB6rd";
  static constexpr const char* kPasswordInUrl = "s3cr3t%3Ap%40ss%2Fw%C3%B6rd";
  static constexpr int kPort = 54329;  // names the socket file only

  ~PostgresTestServer() { Stop(); }

  // Starts the server; on failure returns why (the tests skip with it).
  std::string Start() {
    std::string bindir = FindBinDir();
    if (bindir.empty()) {
      return "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's "
             "postgresql package or set NEARDUP_PG_BINDIR";
    }
    std::string as_user;
    if (geteuid() == 0) {
      if (getpwnam("postgres") == nullptr) return "running as root and no `postgres` user exists";
      as_user = "runuser -u postgres -- ";
    }
    std::string tmp = (std::filesystem::temp_directory_path() / "neardup_pg_XXXXXX").string();
    if (mkdtemp(tmp.data()) == nullptr) return "mkdtemp failed";
    dir_ = tmp;
    if (!as_user.empty() && std::system(("chown postgres " + dir_).c_str()) != 0) {
      return "cannot chown " + dir_ + " to postgres";
    }
    std::ofstream(dir_ + "/pwfile") << kPassword << "\n";
    if (!as_user.empty()) (void)std::system(("chown postgres " + dir_ + "/pwfile").c_str());
    const std::string log = dir_ + "/server.log";
    std::string initdb = as_user + bindir + "/initdb -D " + dir_ + "/data -U " + kUser +
                         " --pwfile=" + dir_ + "/pwfile --auth=scram-sha-256 -E UTF8 " +
                         "--locale=C.UTF-8 --no-sync >" + dir_ + "/initdb.log 2>&1";
    if (std::system(initdb.c_str()) != 0) return "initdb failed: see " + dir_ + "/initdb.log";
    pg_ctl_ = as_user + bindir + "/pg_ctl -D " + dir_ + "/data";
    std::string start = pg_ctl_ + " -l " + log + " -w -t 30 -o \"-c listen_addresses='' " +
                        "-c unix_socket_directories='" + dir_ +
                        "' -c port=" + std::to_string(kPort) +
                        " -c fsync=off -c full_page_writes=off -c synchronous_commit=off\" " +
                        "start >/dev/null 2>&1";
    if (std::system(start.c_str()) != 0) return "pg_ctl start failed: see " + log;
    started_ = true;
    return "";
  }

  void Stop() {
    if (started_) {
      (void)std::system((pg_ctl_ + " -m immediate -w stop >/dev/null 2>&1").c_str());
      started_ = false;
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  // A URL of database `db` with `password` (percent-encoded), on the socket.
  std::string Url(const std::string& db, const std::string& password = kPasswordInUrl) const {
    return "postgresql://" + std::string(kUser) + (password.empty() ? "" : ":" + password) + "@/" +
           db + "?host=" + dir_ + "&port=" + std::to_string(kPort);
  }
  const std::string& socket_dir() const { return dir_; }

 private:
  static std::string FindBinDir() {
    if (const char* env = std::getenv("NEARDUP_PG_BINDIR"); env != nullptr && *env != '\0') {
      return std::filesystem::exists(std::string(env) + "/initdb") ? env : "";
    }
    std::string best;
    int best_version = -1;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string name = entry.path().filename().string();
      const int version = std::atoi(name.c_str());
      if (version > best_version && std::filesystem::exists(entry.path() / "bin/initdb") &&
          std::filesystem::exists(entry.path() / "bin/pg_ctl")) {
        best_version = version;
        best = (entry.path() / "bin").string();
      }
    }
    return best;
  }

  std::string dir_;
  std::string pg_ctl_;
  bool started_ = false;
};

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_POSTGRES_TEST_SERVER_H_
