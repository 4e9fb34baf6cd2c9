#include "recipe_command.h"

#include <cstdio>
#include <memory>

#include "common_options.h"
#include "exit_codes.h"

namespace neardup::cli {
namespace {

int RunShow(const RecipeFlags& flags) {
  Result<Recipe> recipe = flags.Resolve();
  if (!recipe.ok()) return ReportError(recipe.status());
  std::printf("%s\n", CanonicalJson(*recipe).c_str());
  std::fprintf(stderr, "recipe id %s (%s)\n", RecipeId(*recipe).c_str(), recipe->name.c_str());
  return kExitOk;
}

int RunList() {
  for (const std::string& name : PresetNames()) {
    Result<Recipe> recipe = PresetRecipe(name);
    if (!recipe.ok()) return ReportError(recipe.status());
    // The segmentation only where it acts (the word tokenizer).
    const std::string tokenizer =
        recipe->tokenizer == TokenizerKind::kWord
            ? "word segment_scripts=" + std::string(ScriptSegmentationName(recipe->segment_scripts))
            : std::string(TokenizerName(recipe->tokenizer));
    std::printf(
        "%-10s %s  version=%d tokenizer=%s hash=%s simhash=%d bits/%d-shingles "
        "minhash=k%d/%d-shingles chunks=%d-shingles\n",
        name.c_str(), RecipeId(*recipe).c_str(), recipe->version, tokenizer.c_str(),
        std::string(FeatureHashName(recipe->hash)).c_str(), recipe->simhash.bits,
        recipe->simhash.shingle_width, recipe->minhash.num_hashes, recipe->minhash.shingle_width,
        recipe->chunks.shingle_width);
  }
  for (const std::string& name : DigestPresetNames()) {
    Result<Recipe> recipe = PresetRecipe(name);
    if (!recipe.ok()) return ReportError(recipe.status());
    std::printf("%-8s %s  tokenizer=%s hash=%s simhash=%d bits/%d-shingles (SimHash only)\n",
                name.c_str(), RecipeId(*recipe).c_str(),
                std::string(TokenizerName(recipe->tokenizer)).c_str(),
                std::string(FeatureHashName(recipe->hash)).c_str(), recipe->simhash.bits,
                recipe->simhash.shingle_width);
  }
  return kExitOk;
}

}  // namespace

void RegisterRecipeCommand(CLI::App* app, std::function<int()>* run) {
  CLI::App* command = app->add_subcommand("recipe", "Show recipes: presets, canonical form, id");
  command->require_subcommand(1);

  auto flags = std::make_shared<RecipeFlags>();
  CLI::App* show = command->add_subcommand(
      "show", "Print a recipe's canonical JSON (a file usable with --recipe); its id on stderr");
  flags->Register(show);
  show->callback([flags, run] { *run = [flags] { return RunShow(*flags); }; });

  CLI::App* list = command->add_subcommand("list", "List the presets with their ids");
  list->callback([run] { *run = [] { return RunList(); }; });
}

}  // namespace neardup::cli
