/// \file
/// `weir conformance`: every ONNX backend test under the test-data root
/// (node, pytorch-converted, pytorch-operator, simple) through import,
/// expand-all and the CPU backend, judged against each test data set's
/// expected outputs. A test passes when every output of every data set
/// matches (app/cli/conformance.h), fails on any error or mismatch (with a
/// one-line reason), and is skipped only when the filter file lists it.
///
/// Each test runs in a child process by default, so a crash or a hang in
/// generated code costs that test, not the run; `--no-fork` runs them in
/// this process (for a debugger).

#include "app/cli/conformance.h"
#include "app/cli/options.h"
#include "codegen/cpu/compile.h"
#include "core/interp/interpreter.h"
#include "core/runtime/compare.h"
#include "core/runtime/compare_samples.h"
#include "core/runtime/tensor_pb.h"
#include "ir/error.h"
#include "onnx/import.h"
#include "onnx/op_catalog.h"
#include "transforms/operators/expansion.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

namespace weir::cli {

const CommandSpec &conformanceSpec() {
  using K = OptionKind;
  static const CommandSpec spec{
      "conformance",
      "",
      "run the ONNX backend tests (node, pytorch-converted, pytorch-operator, "
      "simple) through import, expand-all and the CPU backend; print "
      "pass/fail/skip and totals",
      {{"--json", K::Flag, "",
        "one JSON object: passed, failed, skipped, tests [{name, status, "
        "reason, ms}]"},
       {"--filter", K::Text, "FILE",
        "skip the tests FILE lists (`dir/test  # why`)"},
       {"--dir", K::Text, "DIR",
        "test-data root (default /usr/share/libonnx-testdata/data)"},
       {"--only", K::Text, "SUBSTRING",
        "only tests whose dir/name contains it (repeatable)", "", 0, true},
       {"--interpreter", K::Flag, "",
        "the reference interpreter, not the backend"},
       {"--threads", K::Count, "N",
        "threads for parallel loops (0: all cores)"},
       {"--jobs", K::Count, "N", "tests run at once, each in its own process",
        "", 1},
       {"--timeout", K::Count, "S", "per-test limit in seconds (default 120)"},
       {"--no-fork", K::Flag, "", "run the tests in this process"}},
      0,
      0};
  return spec;
}
namespace {

using runtime::compareTensors;
using runtime::Comparison;
using runtime::describeMismatch;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char *kDefaultRoot = "/usr/share/libonnx-testdata/data";
constexpr const char *kSuites[] = {"node", "pytorch-converted",
                                   "pytorch-operator", "simple"};
constexpr double kRtol = 1e-3, kAtol = 1e-4;
constexpr std::size_t kMaxReason = 400;

struct Options {
  fs::path root = kDefaultRoot;
  std::string filterFile;
  std::vector<std::string> only; ///< substrings of `suite/test`; any selects
  bool json = false, interpreter = false, fork = true;
  int threads = 0, jobs = 1;
  double timeout = 120; ///< seconds per test in a child process; 0 = none
};

enum class Status : char { Pass = 'P', Fail = 'F', Skip = 'S' };

struct TestCase {
  std::string suite, name; ///< name is `suite/test`
  fs::path dir;
};

struct Result {
  Status status = Status::Fail;
  std::string reason;
  double ms = 0;
};

Options parse(const Args &args) {
  ParsedArgs a = parseArgs(conformanceSpec(), args);
  Options o;
  o.json = a.flag("--json");
  o.interpreter = a.flag("--interpreter");
  o.fork = !a.flag("--no-fork");
  o.filterFile = a.text("--filter").value_or("");
  if (auto dir = a.text("--dir"))
    o.root = *dir;
  o.only = a.texts("--only");
  o.threads = static_cast<int>(a.count("--threads").value_or(o.threads));
  o.jobs = static_cast<int>(a.count("--jobs").value_or(o.jobs));
  o.timeout = double(a.count("--timeout").value_or(std::int64_t(o.timeout)));
  return o;
}

/// One line, at most kMaxReason characters.
std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  if (s.size() > kMaxReason)
    s = s.substr(0, kMaxReason - 3) + "...";
  return s;
}

std::string trim(const std::string &s) {
  auto b = s.find_first_not_of(" \t\r");
  auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The tests under `root`: its node, pytorch-converted, pytorch-operator and
/// simple folders, or (when it has none of them) its own test folders as one
/// suite named after it. A test is a folder holding `model.onnx`.
std::vector<TestCase> discover(const fs::path &root,
                               std::set<std::string> &suites) {
  auto collect = [](const fs::path &dir, const std::string &suite,
                    std::vector<TestCase> &out) {
    std::vector<TestCase> found;
    for (const auto &e : fs::directory_iterator(dir))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
        found.push_back(
            {suite, suite + "/" + e.path().filename().string(), e.path()});
    std::sort(
        found.begin(), found.end(),
        [](const TestCase &a, const TestCase &b) { return a.name < b.name; });
    out.insert(out.end(), found.begin(), found.end());
  };
  std::vector<TestCase> tests;
  if (!fs::is_directory(root))
    throw Error(root.string() + ": not a directory");
  for (const char *suite : kSuites)
    if (fs::is_directory(root / suite)) {
      suites.insert(suite);
      collect(root / suite, suite, tests);
    }
  if (suites.empty()) {
    std::string suite = fs::absolute(root).lexically_normal().filename();
    if (suite.empty())
      suite = fs::absolute(root).parent_path().filename();
    suites.insert(suite);
    collect(root, suite, tests);
  }
  if (tests.empty())
    throw Error(root.string() + ": no ONNX tests (folders with model.onnx)");
  return tests;
}

/// name -> reason from a filter file: `<suite>/<test>  # reason` per line;
/// blank lines and lines starting with '#' are comments.
std::map<std::string, std::string> readFilter(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error(path + ": cannot open the filter file");
  std::map<std::string, std::string> filter;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string text = trim(line);
    if (text.empty() || text[0] == '#')
      continue;
    auto hash = text.find('#');
    std::string name =
        trim(hash == std::string::npos ? text : text.substr(0, hash));
    std::string reason =
        hash == std::string::npos ? "" : trim(text.substr(hash + 1));
    if (name.empty() || reason.empty() ||
        name.find_first_of(" \t") != std::string::npos)
      throw Error(path + ":" + std::to_string(number) +
                  ": expected '<dir>/<test>  # reason', got '" + text + "'");
    filter[name] = reason;
  }
  return filter;
}

/// ONNX stores bfloat16 test data as uint16 bit patterns (numpy has no
/// bfloat16); read such a tensor as the bf16 tensor the model declares.
runtime::Tensor asDeclared(runtime::Tensor t, ir::DType declared) {
  if (declared != ir::DType::BF16 || t.dtype() != ir::DType::U16)
    return t;
  runtime::Tensor bf(ir::DType::BF16, t.shape());
  std::memcpy(bf.mutableData(), t.data(), t.byteSize());
  return bf;
}

std::vector<fs::path> dataSets(const fs::path &dir) {
  std::vector<fs::path> sets;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() &&
        e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

int countFiles(const fs::path &set, const std::string &prefix) {
  int n = 0;
  while (fs::exists(set / (prefix + std::to_string(n) + ".pb")))
    ++n;
  return n;
}

/// "not expandable: If, Loop", naming the first refusal of an operator that
/// has an expansion but could not take this node's attributes or shapes.
std::string notExpandable(const ir::Program &program,
                          const operators::ExpandAllReport &report) {
  std::set<std::string> ops;
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library)
        ops.insert(n.library().op);
  std::string text = "not expandable:";
  std::string refusal;
  for (const std::string &op : ops) {
    text += (text.back() == ':' ? " " : ", ") + op;
    if (refusal.empty() && !operators::implementationsOf(op).empty())
      for (const std::string &why : report.skipped)
        if (why.find("(" + op + ")") != std::string::npos) {
          refusal = why;
          break;
        }
  }
  if (!refusal.empty())
    text += " (refused: " + refusal + ")";
  return text;
}

/// A test's model made ready to run: imported (with its shape inputs
/// fixed, when it has some), expanded and compiled.
struct Prepared {
  ir::Program program;
  std::optional<codegen::Executable> exe;
  std::string notExpandable; ///< why it cannot run, or ""
  /// Its outputs are random: judged as samples (compare_samples.h).
  bool random = false;
};

Prepared prepare(onnx_import::ImportResult imported, const Options &o,
                 std::string &stage) {
  Prepared p;
  p.program = std::move(imported.program);
  p.random = onnx_import::drawsRandomNumbers(p.program);
  stage = "expand";
  operators::ExpandAllReport report = operators::expandAll(p.program);
  if (!report.skipped.empty()) {
    p.notExpandable = notExpandable(p.program, report);
    return p;
  }
  if (!o.interpreter) {
    stage = "compile";
    codegen::CompileOptions options;
    options.threads = o.threads;
    p.exe = codegen::compile(p.program, options);
  }
  return p;
}

/// One test, in this process; never throws. A model whose inputs decide
/// sizes (onnx/shape_inputs.h) is loaded with each data set's values of
/// them fixed, once per distinct value.
Result runTest(const TestCase &test, const Options &o) {
  Result r;
  auto start = Clock::now();
  std::string stage = "import";
  try {
    const fs::path model = test.dir / "model.onnx";
    onnx_import::ImportResult imported = onnx_import::importModel(model);
    // The data sets give every graph input, in this order.
    const std::vector<std::string> graphInputs = imported.program.inputs;
    const std::vector<onnx_import::ShapeInput> shapeInputs =
        imported.report.shapeInputs;
    std::map<std::string, Prepared> prepared; // by the fixed values
    if (shapeInputs.empty())
      prepared.emplace("", prepare(std::move(imported), o, stage));
    std::vector<fs::path> sets = dataSets(test.dir);
    if (sets.empty())
      throw Error("no test_data_set_* folders");
    for (const fs::path &set : sets) {
      stage = set.filename().string();
      auto read = [&](const std::string &prefix, std::size_t i,
                      std::optional<ir::DType> declared) {
        runtime::Tensor t =
            runtime::readTensorPb(set / (prefix + std::to_string(i) + ".pb"));
        return declared ? asDeclared(t, *declared) : t;
      };
      std::map<std::string, ir::TensorValue, std::less<>> fixed;
      std::string key;
      for (const onnx_import::ShapeInput &s : shapeInputs) {
        auto at = std::find(graphInputs.begin(), graphInputs.end(), s.name);
        runtime::Tensor t = read("input_", std::size_t(at - graphInputs.begin()),
                                 std::nullopt);
        key += s.name + "=" + t.describe() + ":" +
               std::string(reinterpret_cast<const char *>(t.data()),
                           t.byteSize()) +
               ";";
        fixed.emplace(s.name, t.value());
      }
      auto found = prepared.find(key);
      if (found == prepared.end()) {
        stage = "import";
        onnx_import::ImportOptions options;
        options.values = fixed;
        found = prepared
                    .emplace(key, prepare(onnx_import::importModel(model, options),
                                          o, stage))
                    .first;
        stage = set.filename().string();
      }
      const Prepared &p = found->second;
      if (!p.notExpandable.empty()) {
        r.reason = p.notExpandable;
        break;
      }
      const ir::Program &program = p.program;
      int given = countFiles(set, "input_");
      int expected = countFiles(set, "output_");
      if (given != static_cast<int>(graphInputs.size()) ||
          expected != static_cast<int>(program.outputs.size()))
        throw Error("the data set has " + std::to_string(given) +
                    " inputs and " + std::to_string(expected) +
                    " outputs, the program " +
                    std::to_string(graphInputs.size()) + " and " +
                    std::to_string(program.outputs.size()));
      interp::TensorMap inputs;
      for (std::size_t i = 0; i < graphInputs.size(); ++i)
        if (!fixed.count(graphInputs[i]))
          inputs[graphInputs[i]] =
              read("input_", i, program.container(graphInputs[i]).dtype);
      interp::TensorMap outputs =
          p.exe ? p.exe->run(inputs) : interp::interpret(program, inputs);
      for (std::size_t i = 0; i < program.outputs.size() && r.reason.empty();
           ++i) {
        const std::string &name = program.outputs[i];
        runtime::Tensor want = read("output_", i, program.container(name).dtype);
        std::string mismatch;
        if (p.random) {
          mismatch = runtime::compareSamples(outputs.at(name), want);
        } else {
          Comparison c = compareTensors(outputs.at(name), want, kRtol, kAtol);
          mismatch = describeMismatch(c, want);
        }
        if (!mismatch.empty())
          r.reason = stage + ": output '" + name + "': " + mismatch +
                     (p.random ? " (a random output, judged as a sample)" : "");
      }
      if (!r.reason.empty())
        break;
    }
    if (r.reason.empty())
      r.status = Status::Pass;
  } catch (const Error &e) {
    r.reason = stage + ": " + e.what();
  } catch (const std::exception &e) {
    r.reason = stage + ": internal error: " + e.what();
  } catch (...) {
    r.reason = stage + ": unknown exception";
  }
  r.reason = oneLine(r.reason);
  r.ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return r;
}

struct Child {
  std::size_t index;
  int fd;
  Clock::time_point start;
};

/// Runs the selected tests, `o.jobs` child processes at a time (or all in
/// this process without fork), calling `done(index, result)` as each ends.
template <typename Done>
void runAll(const std::vector<TestCase> &tests,
            const std::vector<std::size_t> &selected, const Options &o,
            Done done) {
  if (!o.fork) {
    for (std::size_t i : selected)
      done(i, runTest(tests[i], o));
    return;
  }
  // Initialize ONNX's schema registry here once rather than in every child.
  // (Nothing here may start threads: a child would inherit none of them.)
  if (!selected.empty()) {
    try {
      onnx_import::importModel(tests[selected.front()].dir / "model.onnx");
    } catch (...) {
    }
  }
  std::map<pid_t, Child> running;
  auto reap = [&] {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, 0)) < 0 && errno == EINTR) {
    }
    if (pid < 0)
      throw Error(std::string("waitpid: ") + std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end())
      return;
    Child child = it->second;
    running.erase(it);
    std::string message;
    char buf[4096];
    for (ssize_t n; (n = read(child.fd, buf, sizeof buf)) > 0;)
      message.append(buf, static_cast<std::size_t>(n));
    close(child.fd);
    Result r;
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - child.start)
               .count();
    auto newline = message.find('\n');
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
        newline != std::string::npos && newline > 1) {
      r.status = static_cast<Status>(message[0]);
      r.ms = std::atof(message.substr(1, newline - 1).c_str());
      r.reason = message.substr(newline + 1);
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      r.reason = "timed out after " + std::to_string(int(o.timeout)) + " s";
    } else if (WIFSIGNALED(status)) {
      r.reason = std::string("crashed: signal ") +
                 std::to_string(WTERMSIG(status)) + " (" +
                 strsignal(WTERMSIG(status)) + ")";
    } else {
      r.reason = "child exited with status " +
                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    done(child.index, r);
  };
  for (std::size_t i : selected) {
    while (static_cast<int>(running.size()) >= o.jobs)
      reap();
    int fds[2];
    if (pipe(fds) != 0)
      throw Error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
      throw Error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      close(fds[0]);
      rlimit noCore{0, 0}; // a crash is reported, not dumped
      setrlimit(RLIMIT_CORE, &noCore);
      if (o.timeout > 0)
        alarm(static_cast<unsigned>(o.timeout));
      Result r = runTest(tests[i], o);
      char head[64];
      std::snprintf(head, sizeof head, "%c%.3f\n", static_cast<char>(r.status),
                    r.ms);
      std::string message = head + r.reason;
      for (std::size_t off = 0; off < message.size();) {
        ssize_t n = write(fds[1], message.data() + off, message.size() - off);
        if (n <= 0)
          _exit(1);
        off += static_cast<std::size_t>(n);
      }
      _exit(0);
    }
    close(fds[1]);
    running[pid] = {i, fds[0], Clock::now()};
  }
  while (!running.empty())
    reap();
}

const char *statusWord(Status s) {
  return s == Status::Pass ? "pass" : s == Status::Skip ? "skip" : "fail";
}

} // namespace

int conformanceCommand(const Args &args) {
  Options o = parse(args);
  std::set<std::string> suites;
  std::vector<TestCase> tests = discover(o.root, suites);
  std::map<std::string, std::string> filter;
  if (!o.filterFile.empty())
    filter = readFilter(o.filterFile);
  std::set<std::string> names;
  for (const TestCase &t : tests)
    names.insert(t.name);
  for (const auto &[name, reason] : filter)
    if (!names.count(name) && suites.count(name.substr(0, name.find('/'))))
      std::fprintf(stderr, "weir: warning: %s lists %s, which is not a test\n",
                   o.filterFile.c_str(), name.c_str());

  std::vector<std::optional<Result>> results(tests.size());
  std::vector<std::size_t> toRun;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    bool chosen = o.only.empty();
    for (const std::string &s : o.only)
      chosen |= tests[i].name.find(s) != std::string::npos;
    if (!chosen)
      continue;
    if (auto it = filter.find(tests[i].name); it != filter.end())
      results[i] = Result{Status::Skip, it->second, 0};
    else
      toRun.push_back(i);
  }

  auto print = [&](std::size_t i, const Result &r) {
    if (o.json)
      return;
    std::string word = statusWord(r.status);
    std::transform(word.begin(), word.end(), word.begin(), ::toupper);
    char ms[32] = "";
    if (r.status != Status::Skip)
      std::snprintf(ms, sizeof ms, "%.1f ms", r.ms);
    std::printf("%s  %-60s %11s%s%s\n", word.c_str(), tests[i].name.c_str(), ms,
                r.reason.empty() ? "" : "  ", r.reason.c_str());
    std::fflush(stdout);
  };
  for (std::size_t i = 0; i < tests.size(); ++i)
    if (results[i])
      print(i, *results[i]);

  auto start = Clock::now();
  runAll(tests, toRun, o, [&](std::size_t i, Result r) {
    print(i, r);
    results[i] = std::move(r);
  });
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  struct Totals {
    int passed = 0, failed = 0, skipped = 0;
  };
  std::map<std::string, Totals> bySuite;
  Totals total;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (!results[i])
      continue;
    const Result &r = *results[i];
    Totals &s = bySuite[tests[i].suite];
    int Totals::*field = r.status == Status::Pass   ? &Totals::passed
                         : r.status == Status::Skip ? &Totals::skipped
                                                    : &Totals::failed;
    ++(s.*field);
    ++(total.*field);
    list.push_back({{"name", tests[i].name},
                    {"status", statusWord(r.status)},
                    {"reason", r.reason},
                    {"ms", std::round(r.ms * 10) / 10}});
  }
  const char *engine =
      o.interpreter ? "reference interpreter" : "CPU backend (LLVM JIT)";
  if (o.json) {
    nlohmann::ordered_json perSuite = nlohmann::ordered_json::object();
    for (const auto &[suite, t] : bySuite)
      perSuite[suite] = {
          {"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped}};
    // Totals first on one line, then one test per line: easy to grep.
    std::printf("{\"passed\": %d, \"failed\": %d, \"skipped\": %d,\n"
                " \"engine\": %s, \"seconds\": %.1f,\n \"suites\": %s,\n"
                " \"tests\": [",
                total.passed, total.failed, total.skipped,
                nlohmann::json(engine).dump().c_str(), seconds,
                perSuite.dump().c_str());
    for (std::size_t i = 0; i < list.size(); ++i)
      std::printf(
          "%s\n  %s", i ? "," : "",
          list[i]
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              .c_str());
    std::printf("\n]}\n");
    return 0;
  }
  std::printf("\n%-20s %7s %7s %7s\n", "suite", "passed", "failed", "skipped");
  for (const auto &[suite, t] : bySuite)
    std::printf("%-20s %7d %7d %7d\n", suite.c_str(), t.passed, t.failed,
                t.skipped);
  std::printf("%-20s %7d %7d %7d\n", "total", total.passed, total.failed,
              total.skipped);
  std::printf("engine %s, %.1f s\n", engine, seconds);
  return 0;
}

} // namespace weir::cli
