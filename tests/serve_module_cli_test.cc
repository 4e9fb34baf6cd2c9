// `neardup serve` from the module neardup_server.so (apps/server/
// server_module.h): the HTTP libraries are bound only when serving, and a
// missing, broken or foreign module is an error naming it. Serving itself
// through the module: server_test's process tests and serve_crash_test.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"
#include "gmock/gmock.h"

namespace neardup::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ServeModuleCliTest : public CliTestBase {
 protected:
  // A copy of the binary in `name`/ (a copy, not a link: the module is
  // looked for next to the file that runs), with `module` beside it as
  // neardup_server.so when given; runs `serve --help`.
  struct CopyRun {
    CommandResult result;
    std::string module_path;
  };
  CopyRun RunCopy(const std::string& name, const std::string& module) {
    const std::filesystem::path copy = dir_ / name / "neardup";
    std::filesystem::create_directories(copy.parent_path());
    std::filesystem::copy_file(NEARDUP_CLI, copy);
    const std::filesystem::path module_path = copy.parent_path() / "neardup_server.so";
    if (!module.empty()) std::filesystem::copy_file(module, module_path);
    const std::string out = (dir_ / (name + ".out")).string();
    const std::string err = (dir_ / (name + ".err")).string();
    const int status = std::system((copy.string() + " serve --help >" + out + " 2>" + err).c_str());
    CopyRun run;
    run.result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.result.out = Read(out);
    run.result.err = Read(err);
    run.module_path = module_path.string();
    return run;
  }
};

TEST_F(ServeModuleCliTest, TheHttpLibrariesAreLoadedOnlyToServe) {
  // What the dynamic loader maps at start (ldd's own way: the loader lists
  // the objects and exits).
  CommandResult start = NeardupWithEnv("LD_TRACE_LOADED_OBJECTS=1", "--version");
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_THAT(start.out, HasSubstr("libtbb"));
  for (const char* library : {"libcpp-httplib", "libssl", "libbrotli"}) {
    EXPECT_THAT(start.out, Not(HasSubstr(library)));
  }
  // `serve` loads them with the module (its flags are the module's).
  CommandResult help = NeardupWithEnv("LD_DEBUG=files", "serve --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--listen"));
  EXPECT_THAT(help.err, HasSubstr("neardup_server.so"));
  EXPECT_THAT(help.err, HasSubstr("libcpp-httplib"));
  // The top-level help still lists the command.
  CommandResult top = Neardup("--help");
  EXPECT_THAT(top.out, HasSubstr("serve"));
  // A usage error is the module's, with the CLI's exit code.
  CommandResult bad = Neardup("serve --listen nowhere");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--listen (nowhere) must be HOST:PORT"));
  // Session 16: --snapshot-log-mb is checked before anything starts.
  for (const char* mb : {"0", "65537", "-1", "1.5"}) {
    CommandResult log = Neardup(std::string("serve --snapshot-log-mb ") + mb);
    EXPECT_EQ(log.exit_code, 2) << mb << "\n" << log.err;
    EXPECT_THAT(log.err, HasSubstr("--snapshot-log-mb")) << mb;
  }
  // Session 19: --index-merge-idle takes finite seconds only (CLI11's Range
  // lets "nan" through; it was cast to milliseconds, undefined behaviour).
  for (const char* seconds : {"nan", "-nan", "NaN", "inf", "-inf", "-1", "31536001", "x"}) {
    CommandResult idle = Neardup(std::string("serve --index-merge-idle ") + seconds);
    EXPECT_EQ(idle.exit_code, 2) << seconds << "\n" << idle.err;
    EXPECT_THAT(idle.err, HasSubstr("--index-merge-idle")) << seconds;
  }
  CommandResult unknown = Neardup("serve --no-such-flag");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("--no-such-flag"));
}

TEST_F(ServeModuleCliTest, AMissingBrokenOrForeignModuleIsAnErrorNamingIt) {
  if (std::filesystem::exists(NEARDUP_SERVER_MODULE_INSTALLED)) {
    GTEST_SKIP() << "an installed " << NEARDUP_SERVER_MODULE_INSTALLED
                 << " would serve a copy of neardup too";
  }
  // The module beside a copy: it serves.
  const CopyRun with = RunCopy("with", NEARDUP_SERVER_MODULE_PATH);
  EXPECT_EQ(with.result.exit_code, 0) << with.result.err;
  EXPECT_THAT(with.result.out, HasSubstr("--listen"));

  // No module beside it: an error naming the module and where it was looked for.
  const CopyRun lonely = RunCopy("lonely", "");
  EXPECT_EQ(lonely.result.exit_code, 2);
  EXPECT_EQ(lonely.result.out, "");
  EXPECT_THAT(lonely.result.err,
              HasSubstr("neardup: this neardup serves HTTP (`neardup serve`) with the module "
                        "neardup_server.so, which is not installed (looked for " +
                        lonely.module_path));
  // Other commands do not need it.
  {
    const std::string copy = (dir_ / "lonely" / "neardup").string();
    const int status = std::system((copy + " --version >/dev/null 2>&1").c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  // A file that is no shared object: an error naming it, no abort.
  const std::string garbage = (dir_ / "garbage.so").string();
  {
    std::ofstream file(garbage, std::ios::binary);
    file << "not an ELF file!";  // 16 bytes
  }
  const CopyRun broken = RunCopy("broken", garbage);
  EXPECT_EQ(broken.result.exit_code, 2);
  EXPECT_THAT(broken.result.err, HasSubstr("cannot load the module " + broken.module_path + ": "));

  // A module of another build (tests/other_build_server_module.cc):
  // refused before its (null) serve_main is called, naming it and both ids.
  const CopyRun other = RunCopy("other", NEARDUP_OTHER_BUILD_SERVER_MODULE);
  EXPECT_EQ(other.result.exit_code, 2);
  EXPECT_THAT(other.result.err, HasSubstr("the module " + other.module_path +
                                          " is of another neardup build (build id 0.0.0-another, "
                                          "this neardup "));
}

// The loader's other refusals (tests/broken_server_module.cc), each exit 2
// naming the module: a table of another version, an entry that returns no
// table, no entry symbol.
TEST_F(ServeModuleCliTest, AModuleWithAnotherTableNoTableOrNoEntryIsRefused) {
  if (std::filesystem::exists(NEARDUP_SERVER_MODULE_INSTALLED)) {
    GTEST_SKIP() << "an installed " << NEARDUP_SERVER_MODULE_INSTALLED
                 << " would serve a copy of neardup too";
  }
  const CopyRun wrong_abi = RunCopy("wrong_abi", NEARDUP_BROKEN_SERVER_MODULE_WRONG_ABI);
  EXPECT_EQ(wrong_abi.result.exit_code, 2);
  EXPECT_EQ(wrong_abi.result.out, "");
  EXPECT_THAT(wrong_abi.result.err,
              HasSubstr("the module " + wrong_abi.module_path +
                        " is of another neardup build (table version 99, this neardup 1)"));

  const CopyRun no_table = RunCopy("no_table", NEARDUP_BROKEN_SERVER_MODULE_NO_TABLE);
  EXPECT_EQ(no_table.result.exit_code, 2);
  EXPECT_THAT(no_table.result.err,
              HasSubstr("the module " + no_table.module_path + " returned no table"));

  const CopyRun no_symbol = RunCopy("no_symbol", NEARDUP_BROKEN_SERVER_MODULE_NO_SYMBOL);
  EXPECT_EQ(no_symbol.result.exit_code, 2);
  EXPECT_THAT(no_symbol.result.err,
              HasSubstr("the module " + no_symbol.module_path +
                        " has no neardup_server_v1: it is of another neardup build (this "
                        "neardup "));
}

}  // namespace
}  // namespace neardup::testing
