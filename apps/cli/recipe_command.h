// `neardup recipe`: show presets and the canonical form and id of a recipe.
#ifndef NEARDUP_APPS_CLI_RECIPE_COMMAND_H_
#define NEARDUP_APPS_CLI_RECIPE_COMMAND_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace neardup::cli {

void RegisterRecipeCommand(CLI::App* app, std::function<int()>* run);

}  // namespace neardup::cli

#endif  // NEARDUP_APPS_CLI_RECIPE_COMMAND_H_
