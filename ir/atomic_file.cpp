#include "ir/atomic_file.h"

#include "ir/error.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace weir {
namespace {

std::string quote(const std::filesystem::path &p) {
  return "'" + p.string() + "'";
}

} // namespace

void writeFileAtomically(const std::filesystem::path &path,
                         std::string_view bytes, Durability durability) {
  writeFileAtomically(
      path, [&](const FileAppend &append) { append(bytes); }, durability);
}

void writeFileAtomically(const std::filesystem::path &path,
                         const std::function<void(const FileAppend &)> &fill,
                         Durability durability) {
  std::string name = quote(path);
  auto fail = [&](const std::string &step) {
    return Error("cannot write " + name + ": " + step + ": " +
                 std::strerror(errno));
  };
  std::filesystem::path dir = path.parent_path();
  if (dir.empty())
    dir = ".";
  // Not mkstemp: its 0600 mode would ignore the umask. The name is unique
  // to this process and call; O_EXCL guards against anything left over.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp =
      dir / ("." + path.filename().string() + ".tmp." +
             std::to_string(::getpid()) + "." + std::to_string(counter++));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    throw fail("cannot create a temporary file in " + quote(dir));
  try {
    fill([&](std::string_view bytes) {
      std::size_t done = 0;
      while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0)
          throw fail("write failed");
        done += static_cast<std::size_t>(n);
      }
    });
    if (durability == Durability::Synced && ::fsync(fd) != 0)
      throw fail("fsync failed");
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0)
      throw fail("close failed");
    if (::rename(temp.c_str(), path.c_str()) != 0)
      throw fail("rename failed");
  } catch (...) {
    if (fd >= 0)
      ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // Make the rename itself durable; a failure here loses nothing already
  // visible, so it is not worth an error.
  if (durability == Durability::Unsynced)
    return;
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

} // namespace weir
