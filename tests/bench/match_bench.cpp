// Match-listing benchmark (not part of the pass/fail suite): lists every
// match of every registered transformation on synthetic programs of about
// 5,000 nodes — Conv → BatchNormalization → Relu → Identity blocks, as
// exporters emit them — in one state and spread over 50 states, cold (empty
// cache) and after one applied step (incremental). Prints medians.
//
//   build/release/tests/weir_match_bench [NODES]

#include "transforms/graph_builder.h"
#include "transforms/registry.h"
#include "workspace/workspace.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace weir;

namespace {

ir::Program blocks(int nodes, int states) {
  transforms_testing::GraphBuilder g("match_bench");
  const int perBlock = 13;
  int count = std::max(1, nodes / perBlock);
  g.input("x0", {1, 8, 8, 8});
  std::vector<float> w(8 * 8), stat(8, 0.5f);
  int perState = (count + states - 1) / states;
  for (int b = 0; b < count; ++b) {
    if (b > 0 && b % perState == 0)
      g.newState("s" + std::to_string(b / perState));
    std::string i = std::to_string(b);
    std::string in = "x" + i, mid = "c" + i, bn = "n" + i, relu = "r" + i,
                out = "x" + std::to_string(b + 1);
    g.transient(mid, {1, 8, 8, 8})
        .transient(bn, {1, 8, 8, 8})
        .transient(relu, {1, 8, 8, 8});
    if (b + 1 == count)
      g.output(out, {1, 8, 8, 8});
    else
      g.transient(out, {1, 8, 8, 8});
    g.constantF32("w" + i, {8, 8, 1, 1}, w);
    for (const char *s : {"s", "t", "m", "v"})
      g.constantF32(s + i, {8}, stat);
    g.op("Conv", "conv" + i, {{"X", in}, {"W", "w" + i}}, {{"Y", mid}});
    g.op("BatchNormalization", "bn" + i,
         {{"X", mid},
          {"scale", "s" + i},
          {"B", "t" + i},
          {"mean", "m" + i},
          {"var", "v" + i}},
         {{"Y", bn}});
    g.op("Relu", "relu" + i, {{"X", bn}}, {{"Y", relu}});
    g.op("Identity", "id" + i, {{"input", relu}}, {{"output", out}});
  }
  return g.p;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(int nodes, int states) {
  ir::Program p = blocks(nodes, states);
  std::vector<double> cold, warm;
  std::size_t matches = 0;
  for (int rep = 0; rep < 11; ++rep) {
    workspace::Workspace ws(p);
    auto t0 = std::chrono::steady_clock::now();
    auto all = ws.allMatches();
    auto t1 = std::chrono::steady_clock::now();
    matches = 0;
    for (const auto &[id, ms] : all)
      matches += ms.size();
    // One step, then list again: only the changed state is matched anew.
    ws.apply("remove-identity", ws.matches("remove-identity").back());
    auto t2 = std::chrono::steady_clock::now();
    ws.allMatches();
    auto t3 = std::chrono::steady_clock::now();
    cold.push_back(std::chrono::duration<double>(t1 - t0).count());
    warm.push_back(std::chrono::duration<double>(t3 - t2).count());
  }
  std::printf(
      "%5zu nodes in %2d state(s): %6zu matches of %zu transformations; "
      "all matches cold %.1f ms, after one step %.1f ms (medians of 11)\n",
      p.nodeCount(), states, matches,
      weir::transforms::transformations().size(), median(cold) * 1e3,
      median(warm) * 1e3);
}

} // namespace

int main(int argc, char **argv) {
  int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  run(nodes, 1);
  run(nodes, 50);
  return 0;
}
