/// \file
/// `weir_layout_bench [--runs N] [--sizes 1000,2000,5000] [--compare]`: the
/// median wall and CPU time weir-studio's Graphviz layout takes on synthetic
/// graphs shaped like the networks Weir shows — chains of operators and the
/// containers between them, residual skips, inception-style branches that
/// fan out and concatenate, and weights feeding operators. A benchmark,
/// not a test: it prints times and never fails on them.
///
/// `--compare` also times dot's default settings once per size (tens of
/// seconds at 5,000 nodes), to show what LayoutSettings::forSize buys.
/// Wall time includes whatever else the machine runs; the CPU column is the
/// layout thread's own.

#include "app/studio/graph_layout.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

using weir::studio::GraphvizLayout;
using weir::studio::LayoutGraph;
using weir::studio::LayoutSettings;

/// A network-shaped DAG of about `target` nodes, alternating containers
/// (access nodes) and operators as Weir's imported programs do.
class NetworkBuilder {
public:
  explicit NetworkBuilder(unsigned seed) : rng_(seed) {}

  LayoutGraph build(std::size_t target) {
    std::size_t x = container();
    while (g_.nodes.size() < target) {
      int kind = pick(0, 9);
      if (kind < 5)
        x = chainStep(x);
      else if (kind < 8)
        x = residual(x);
      else
        x = inception(x);
    }
    return std::move(g_);
  }

private:
  int pick(int lo, int hi) {
    return std::uniform_int_distribution(lo, hi)(rng_);
  }

  std::size_t node(double w, double h) {
    g_.nodes.push_back({w, h});
    return g_.nodes.size() - 1;
  }
  std::size_t container() { return node(90 + pick(0, 60), 40); }
  void edge(std::size_t a, std::size_t b) { g_.edges.push_back({a, b}); }

  /// One operator reading `inputs` (and a weight half of the time) and
  /// writing a new container, which it returns.
  std::size_t op(const std::vector<std::size_t> &inputs) {
    std::size_t o = node(110 + pick(0, 80), 48);
    for (std::size_t in : inputs)
      edge(in, o);
    if (pick(0, 1))
      edge(container(), o);
    std::size_t out = container();
    edge(o, out);
    return out;
  }

  std::size_t chainStep(std::size_t x) { return op({x}); }

  /// conv, conv, add with the block's input.
  std::size_t residual(std::size_t x) {
    std::size_t y = op({op({x})});
    return op({y, x});
  }

  /// Two to four branches of one to three operators, concatenated.
  std::size_t inception(std::size_t x) {
    std::vector<std::size_t> ends;
    for (int b = pick(2, 4); b > 0; --b) {
      std::size_t y = x;
      for (int d = pick(1, 3); d > 0; --d)
        y = op({y});
      ends.push_back(y);
    }
    return op(ends);
  }

  std::mt19937 rng_;
  LayoutGraph g_;
};

/// CPU seconds of the calling thread: on a machine shared with compilers,
/// wall time alone measures the neighbours too.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string describe(const LayoutSettings &s) {
  std::string out = "splines=" + s.splines;
  if (s.newrank)
    out += " newrank";
  if (s.positionIterations > 0)
    out += " position iterations<=" + std::to_string(s.positionIterations);
  return out;
}

std::vector<std::size_t> parseSizes(const std::string &text) {
  std::vector<std::size_t> sizes;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    sizes.push_back(std::stoul(text.substr(pos, comma - pos)));
    pos = comma == std::string::npos ? text.size() : comma + 1;
  }
  return sizes;
}

} // namespace

int main(int argc, char **argv) {
  int runs = 5;
  bool compare = false;
  std::vector<std::size_t> sizes = {1000, 2000, 5000};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--sizes" && i + 1 < argc)
      sizes = parseSizes(argv[++i]);
    else if (a == "--compare")
      compare = true;
    else {
      std::fprintf(stderr, "usage: weir_layout_bench [--runs N] "
                           "[--sizes 1000,2000,5000] [--compare]\n");
      return 2;
    }
  }

  GraphvizLayout dot;
  std::printf("%-6s %-6s %-52s %8s %8s %8s %8s\n", "nodes", "edges", "settings",
              "wall s", "min s", "max s", "cpu s");
  for (std::size_t target : sizes) {
    LayoutGraph g = NetworkBuilder(42).build(target);
    std::vector<LayoutSettings> variants = {
        LayoutSettings::forSize(g.nodes.size())};
    if (compare)
      variants.push_back(LayoutSettings{});
    for (std::size_t v = 0; v < variants.size(); ++v) {
      // dot's defaults on large graphs are the slow case being shown: once.
      int n = v == 0 ? runs : 1;
      std::vector<double> times, cpu;
      for (int r = 0; r < n; ++r) {
        double c0 = threadCpuSeconds();
        times.push_back(dot.run(g, variants[v]).seconds);
        cpu.push_back(threadCpuSeconds() - c0);
      }
      std::printf("%-6zu %-6zu %-52s %8.3f %8.3f %8.3f %8.3f\n", g.nodes.size(),
                  g.edges.size(), describe(variants[v]).c_str(), median(times),
                  *std::min_element(times.begin(), times.end()),
                  *std::max_element(times.begin(), times.end()), median(cpu));
      std::fflush(stdout);
    }
  }
  return 0;
}
