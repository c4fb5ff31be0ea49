#pragma once
/// \file
/// Incremental matching: matches are cached per transformation and state.
/// A state is the same as when it was matched when it holds the same
/// elements (nodes and edges are shared between versions until changed,
/// ir/cow_list.h; the cache keeps the elements it matched alive, so an
/// address is an identity) and the containers it names fingerprint the
/// same. After a transformation changes one state, only that state is
/// matched again; the others reuse their matches. A changed state is told
/// apart by addresses alone: hashing every node and edge of every version
/// was 6 times the matching it saved on a one-state program (DenseNet-121).

#include "transforms/transformation.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace weir::transforms {

/// A fingerprint of the containers `state` names, as a pattern can see
/// them: dtype, shape, strides, storage, transient, constant data by
/// identity, argument or not. Constant data is compared by identity (blobs
/// are immutable and shared), so the fingerprint keeps the blobs it saw
/// alive in `keep`.
std::uint64_t
containerFingerprint(const ir::Program &program, const ir::State &state,
                     std::vector<std::shared_ptr<const void>> *keep);

class MatchCache {
public:
  /// Every match of `t` in `program`, in findMatches' order.
  std::vector<Match> matches(const ir::Program &program,
                             const Transformation &t);
  /// Matches of every registered transformation (registry order), with
  /// each state's snapshot and fingerprint made once.
  std::vector<std::pair<std::string, std::vector<Match>>>
  allMatches(const ir::Program &program);

  struct Stats {
    std::int64_t statesMatched = 0; ///< (transformation, state) pairs run
    std::int64_t statesReused = 0;  ///< ... served from the cache
  };
  const Stats &stats() const { return stats_; }
  void clear() { entries_.clear(); }

private:
  struct Entry {
    /// The state as matched, sharing its elements (and keeping them alive).
    std::shared_ptr<const ir::State> state;
    std::uint64_t containers = 0; ///< containerFingerprint when matched
    std::vector<Match> matches;
    std::vector<std::shared_ptr<const void>> keep; ///< for `containers`
  };
  struct Seen;
  static std::vector<Seen> seen(const ir::Program &program);
  std::vector<Match> matchWith(const ir::Program &program,
                               const Transformation &t,
                               std::vector<Seen> &seen);
  /// transformation id -> state name -> entry
  std::map<std::string, std::map<std::string, Entry>, std::less<>> entries_;
  Stats stats_;
};

} // namespace weir::transforms
