/// \file
/// Replays saved inputs through one harness, without libFuzzer: every file
/// named on the command line, or found under a folder named there, in
/// sorted order. Built for each harness in the normal and ASan suites, so
/// the corpus and every input that once crashed Weir run on each change.
/// Prints how many inputs ran; fails when a folder holds none.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size);

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  std::size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i])) {
      for (const auto &entry : fs::recursive_directory_iterator(argv[i]))
        if (entry.is_regular_file() && entry.path().filename() != "README.md")
          files.push_back(entry.path());
      if (files.empty()) {
        std::fprintf(stderr, "replay: no inputs under %s\n", argv[i]);
        return 1;
      }
    } else {
      files.push_back(argv[i]);
    }
    std::sort(files.begin(), files.end());
    for (const fs::path &file : files) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
        return 1;
      }
      std::string bytes((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replay: %s\n", file.c_str());
      LLVMFuzzerTestOneInput(
          reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size());
      ++total;
    }
  }
  std::printf("replayed %zu inputs\n", total);
  return 0;
}
