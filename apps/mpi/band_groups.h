// The MinHash stage of FindPairsDistributed (distributed_pairs.h): one
// round of LSH bands through the band-key shuffle. Every rank sends each of
// its documents' (band, key, document) records (20 bytes) to the key's owner
// (a mix of band and key); the owner sorts them (a counting sort on band and
// the key's top bits) and groups equal (band, key) into cliques of
// candidates, dropping a group whose members equal an earlier band's group
// there; groups of 16 members or more go to every rank, which expand the
// distinct ones once for the job, a share of their rows each; each candidate
// pair goes to its verifier (the owner of one of its documents, by a hash of
// the pair). docs/DISTRIBUTED.md, "MinHash: the band-key shuffle", says why.
// Memory per rank: one round's records sent and received (20 bytes per
// document and band of the round), its candidate pairs (16 bytes each),
// merged into this rank's own list's block; the sorted records (24 bytes
// each), the sort's key lists (16 bytes a pair of the longest list) and the
// received candidates in one StageBlock handed from stage to stage.
#ifndef NEARDUP_APPS_MPI_BAND_GROUPS_H_
#define NEARDUP_APPS_MPI_BAND_GROUPS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "distributed_pairs.h"
#include "mpi_comm.h"
#include "neardup/fingerprinter.h"
#include "neardup/near_duplicate_stages.h"
#include "neardup/status.h"
#include "stage_block.h"

namespace neardup::mpi {

// Collective. The candidate pairs of bands [bands.begin, bands.end) whose
// verifier is this rank, appended to *mine (which is then sorted and made
// unique). `local` are this rank's documents, numbered from
// `first_document`. *block is scratch handed from round to round (the
// records, key lists and received candidates; its contents unspecified
// after the call). Adds the bytes sent to stats->key_bytes and
// candidate_bytes. After the last round (bands.end == scheme.num_parts),
// *mine has spare capacity for at least a quarter more pairs (the split by
// cost may hand this rank more; see band_groups.cc).
Status ShuffleBandRound(Comm& comm, const DocumentLayout& layout,
                        const std::vector<Fingerprint>& local, uint64_t first_document,
                        const NearDuplicateScheme& scheme, PartRange bands, StageBlock* block,
                        std::vector<CandidatePair>* mine, DistributedPairsStats* stats);

}  // namespace neardup::mpi

#endif  // NEARDUP_APPS_MPI_BAND_GROUPS_H_
