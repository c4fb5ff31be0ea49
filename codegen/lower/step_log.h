#pragma once
/// \file
/// A pipeline as a flat list of named steps, the way Halide's Lower.cpp
/// reads: `step("translate", [&] { ... })` runs one step and, when the
/// environment sets WEIR_LOG=1, prints its name and time on stderr
/// ("weir: lower cnn: translate 1.84 ms"). Lowering uses it; the GPU and
/// accelerator lowerings are meant to.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace weir::codegen {

class StepLog {
public:
  /// `pipeline` names the run in each line ("lower cnn").
  explicit StepLog(std::string pipeline)
      : pipeline_(std::move(pipeline)), on_(enabled()) {}

  /// Runs `f` as the step `name` and returns what it returns.
  template <typename F>
  decltype(auto) operator()(std::string_view name, F &&f) {
    auto start = std::chrono::steady_clock::now();
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
      f();
      report(name, start);
    } else {
      decltype(auto) result = f();
      report(name, start);
      return result;
    }
  }

  /// Whether WEIR_LOG=1.
  static bool enabled() {
    const char *v = std::getenv("WEIR_LOG");
    return v && std::string_view(v) == "1";
  }

private:
  void report(std::string_view name,
              std::chrono::steady_clock::time_point start) const {
    if (!on_)
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::fprintf(stderr, "weir: %s: %.*s %.2f ms\n", pipeline_.c_str(),
                 int(name.size()), name.data(), ms);
  }

  std::string pipeline_;
  bool on_;
};

} // namespace weir::codegen
