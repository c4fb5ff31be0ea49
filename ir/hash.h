#pragma once
/// \file
/// Structural hash of a program and the byte hash it builds on.
///
/// The structural hash covers everything a program computes with: symbols,
/// every container (name, dtype, shape, strides, storage, transient flag and
/// the *contents* of constant data), the ordered inputs and outputs, and every
/// state with its nodes (id, kind, label, connectors, payload including
/// attributes, nested subgraphs and the chosen implementation) and edges (id,
/// endpoints, connectors, memlet) and the program's next node and edge ids
/// (so two programs that will number new nodes differently differ). It
/// leaves out the program's name and its
/// metadata (source path, producer), so the same model imported from two
/// places hashes the same. Two programs with equal JSON (up to metadata) have
/// equal hashes; the hash is stable across runs and machines.

#include <cstddef>
#include <cstdint>
#include <string>

namespace weir::ir {

class Program;

/// 64-bit non-cryptographic hash of bytes, stable across platforms.
std::uint64_t hashBytes(const void *data, std::size_t size,
                        std::uint64_t seed = 0);

std::uint64_t structuralHash(const Program &program);
/// The hash as 16 lower-case hex digits.
std::string hashHex(std::uint64_t h);

} // namespace weir::ir
