// What each stage of neardup-mpi saves to its checkpoint (checkpoint.h)
// and reads back on --resume, one file per rank:
//   fingerprint.rank<R>  near-duplicate commands: the rank's fingerprinted
//                        share (format/fingerprint_set.h: ids, lengths,
//                        sketches, chunk sets, raw records for dedup) and
//                        its count of skipped records
//   pairs.rank<R>        its verified pairs (placed as the command places
//                        them) and its counters of the pair search
//   lines.rank<R>        fingerprint: its formatted lines and counters
// The last two are checksummed files (format/checksummed_file.h) of kinds
// "mpi-pairs" and "mpi-lines" holding host-order integers: a checkpoint is
// read back by the same job on the same kind of machines.
#ifndef NEARDUP_APPS_MPI_CHECKPOINT_STAGES_H_
#define NEARDUP_APPS_MPI_CHECKPOINT_STAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "distributed_pairs.h"
#include "neardup/clustering.h"
#include "neardup/fingerprint_pipeline.h"
#include "neardup/near_duplicate_stages.h"

namespace neardup::mpi {

inline constexpr char kFingerprintStage[] = "fingerprint";
inline constexpr char kPairsStage[] = "pairs";
inline constexpr char kLinesStage[] = "lines";

Status SaveFingerprintStage(const Checkpoint& checkpoint, const FingerprintedCorpus& corpus,
                            uint64_t skipped);
Status LoadFingerprintStage(const Checkpoint& checkpoint, FingerprintedCorpus* corpus,
                            uint64_t* skipped);

// This rank's pairs and its share of the counters (report->candidates and
// exact_checks, the shuffle's bytes and rounds, the bytes of pairs it placed,
// the documents it fingerprinted again; not its stage times).
Status SavePairsStage(const Checkpoint& checkpoint, const std::vector<SimilarPair>& pairs,
                      const NearDuplicateReport& report, const DistributedPairsStats& shuffle);
Status LoadPairsStage(const Checkpoint& checkpoint, std::vector<SimilarPair>* pairs,
                      NearDuplicateReport* report, DistributedPairsStats* shuffle);

// `fingerprint`'s state after reading: this rank's lines and counters.
struct LinesStage {
  std::string text;
  uint64_t skipped = 0;
  uint64_t documents = 0;
  uint64_t bytes = 0;
  uint64_t empty = 0;
  uint64_t invalid_utf8 = 0;
};
Status SaveLinesStage(const Checkpoint& checkpoint, const LinesStage& stage);
Status LoadLinesStage(const Checkpoint& checkpoint, LinesStage* stage);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_CHECKPOINT_STAGES_H_
