// neardup: the command-line front end. Flag parsing and routing only; every
// algorithm lives in the library. Exit codes: exit_codes.h.
#include <CLI/CLI.hpp>

#include <functional>

#include "exit_codes.h"
#include "fingerprint_command.h"
#include "index_command.h"
#include "near_duplicate_commands.h"
#include "query_command.h"
#include "recipe_command.h"
#include "similar_command.h"
#ifdef NEARDUP_HAVE_SERVER
#include "serve_command.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"neardup: find near-duplicate and similar documents, fast", "neardup"};
  app.set_version_flag("--version", "neardup 0.1.0");
  app.require_subcommand(1);

  std::function<int()> run;
  neardup::cli::RegisterFingerprintCommand(&app, &run);
  neardup::cli::RegisterNearDuplicateCommands(&app, &run);
  neardup::cli::RegisterRecipeCommand(&app, &run);
  neardup::cli::RegisterIndexCommand(&app, &run);
  neardup::cli::RegisterSimilarCommand(&app, &run);
  neardup::cli::RegisterQueryCommand(&app, &run);
#ifdef NEARDUP_HAVE_SERVER
  neardup::server::RegisterServeCommand(&app, &run);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return neardup::cli::kExitUsage;
  }
  return run ? run() : neardup::cli::kExitUsage;
}
