// neardup/loadable_module.h: a module is named by a bare file name (the
// loading itself: tests/serve_module_cli_test.cc, input_formats_cli_test).
#include "neardup/loadable_module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace neardup {
namespace {

using ::testing::HasSubstr;

TEST(LoadModuleHeadTest, ANameThatIsNoBareFileNameIsRefused) {
  for (const char* name : {"", ".", "..", "../../tmp/x.so", "/tmp/x.so", "lib/x.so", "x.so/"}) {
    Result<const ModuleTableHead*> head = LoadModuleHead(name, "entry", "does things", 1);
    ASSERT_FALSE(head.ok()) << name;
    EXPECT_EQ(head.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(head.status().message(), HasSubstr("file name alone")) << name;
  }
  // A bare name is looked for (and here not found).
  Result<const ModuleTableHead*> missing =
      LoadModuleHead("neardup_no_such_module.so", "entry", "does things", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("this neardup does things with the module neardup_no_such_module.so, "
                        "which is not installed (looked for "));
}

}  // namespace
}  // namespace neardup
