/// \file
/// The one source of libweir.so (top-level CMakeLists.txt): everything else
/// comes whole from the static libraries. The version lets a front end check
/// which library the loader picked.

extern "C" __attribute__((visibility("default"))) const char *
weir_library_version() {
  return WEIR_VERSION;
}
