#pragma once
/// \file
/// ONNX's own passes over a model — the version converter, the checker and
/// shape inference (with data propagation), and Weir's check of declared
/// shapes against inferred ones (passes/shape_consistency.h) — run in a child
/// process. They trust their input: an out-of-range `axis` makes ONNX 1.12's
/// shape inference index outside a vector, and other hostile models have
/// crashed its checker. In a child, such a crash, or a pass that does not
/// finish, is a refusal with a message, and Weir's own process (the GUI
/// with the user's unsaved work, a Python session) lives on.
///
/// The child is the program `weir-onnx-passes` (passes/main.cpp), started
/// with posix_spawn: the importer runs in threaded processes (the GUI's
/// workers, Python), where a forked copy of the process could wait forever
/// on a lock another thread held. It reads the model from an anonymous
/// file and sends back (passes/protocol.h) what the passes made (the
/// inferred model, its initializers' data left out and taken from the
/// parent's copy; the whole model when the converter rewrote it) and their
/// notes.

#include "onnx/import.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace weir::onnx_import {

/// Runs the passes `options` asks for on `model` in a child process and
/// replaces `model` with the result; fills `report`'s opsets, notes and
/// unverifiedShapes. Throws weir::Error when a declared shape disagrees
/// with the operators (naming the value, both shapes and the node), when a
/// pass crashes (naming the pass and the signal), or when the passes run
/// past `options.passSeconds`.
void runOnnxPasses(onnx::ModelProto &model, const ImportOptions &options,
                   ImportReport &report);

} // namespace weir::onnx_import
