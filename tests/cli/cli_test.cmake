# End-to-end checks of the `weir` command line, run with `cmake -P`:
# convert -> validate -> print of the saved program, inspect --json keys, and
# one-line errors with a non-zero status on bad input.

function(run_weir out_var status_var)
  execute_process(COMMAND ${WEIR} ${ARGN} OUTPUT_VARIABLE out
                  ERROR_VARIABLE err RESULT_VARIABLE status)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${status_var} "${status}" PARENT_SCOPE)
endfunction()

function(expect_status want got what output)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: exit status ${got}, expected ${want}\n${output}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(model ${SOURCE_DIR}/resources/models/transformer.onnx)

# convert, then the saved program validates and prints like the model.
run_weir(out status convert ${model} -o ${WORK_DIR}/t.json)
expect_status(0 "${status}" "convert" "${out}")
if(NOT EXISTS ${WORK_DIR}/t.json OR NOT EXISTS ${WORK_DIR}/t.json.bin)
  message(FATAL_ERROR "convert did not write t.json and its sidecar")
endif()
run_weir(out status validate ${WORK_DIR}/t.json)
expect_status(0 "${status}" "validate program" "${out}")
if(NOT out MATCHES " 0 errors")
  message(FATAL_ERROR "validate: unexpected report\n${out}")
endif()
run_weir(from_model status print ${model})
expect_status(0 "${status}" "print model" "${from_model}")
run_weir(from_json status print ${WORK_DIR}/t.json)
expect_status(0 "${status}" "print program" "${from_json}")
if(NOT from_model STREQUAL from_json)
  message(FATAL_ERROR "print differs between the model and its saved program")
endif()

# inspect --json carries the documented keys.
run_weir(out status inspect --json ${model})
expect_status(0 "${status}" "inspect --json" "${out}")
foreach(key ops flops bytes_moved inputs outputs unsupported)
  string(JSON value ERROR_VARIABLE err GET "${out}" ${key})
  if(err)
    message(FATAL_ERROR "inspect --json lacks key '${key}': ${err}")
  endif()
endforeach()

# Bad input: status 1 and one line that names the file.
foreach(bad ${CORPUS}/truncated_half/model.onnx
            ${CORPUS}/ext_absolute_path/model.onnx
            ${WORK_DIR}/does-not-exist.onnx)
  run_weir(out status inspect ${bad})
  expect_status(1 "${status}" "inspect ${bad}" "${out}")
  string(STRIP "${out}" stripped)
  string(FIND "${stripped}" "\n" newline)
  if(NOT newline EQUAL -1 OR NOT stripped MATCHES "^weir: error: .*${bad}")
    message(FATAL_ERROR "inspect ${bad}: expected one line naming the file, got\n${out}")
  endif()
endforeach()

# A corrupted sidecar is reported, not loaded.
file(WRITE ${WORK_DIR}/t.json.bin "garbage")
run_weir(out status validate ${WORK_DIR}/t.json)
expect_status(1 "${status}" "validate with corrupted sidecar" "${out}")

# Usage errors exit 2.
run_weir(out status inspect)
expect_status(2 "${status}" "inspect without a model" "${out}")
run_weir(out status frobnicate)
expect_status(2 "${status}" "unknown command" "${out}")

# run: an ONNX node test on the interpreter matches its expected output, and
# a wrong expectation makes the exit status 1.
set(node /usr/share/libonnx-testdata/data/node)
set(bcast ${node}/test_add_bcast)
run_weir(out status run ${bcast}/model.onnx
         --inputs x=${bcast}/test_data_set_0/input_0.pb
                  y=${bcast}/test_data_set_0/input_1.pb
         --expected sum=${bcast}/test_data_set_0/output_0.pb
         --save-outputs ${WORK_DIR}/run-out)
expect_status(0 "${status}" "run test_add_bcast" "${out}")
if(NOT out MATCHES "sum +f32\\[3, 4, 5\\] +max abs err 0 .* ok" OR
   NOT EXISTS ${WORK_DIR}/run-out/sum.npy)
  message(FATAL_ERROR "run test_add_bcast: unexpected output\n${out}")
endif()
# --inputs may be given once per input, as the old parser took it.
run_weir(out status run ${bcast}/model.onnx
         --inputs x=${bcast}/test_data_set_0/input_0.pb
         --inputs y=${bcast}/test_data_set_0/input_1.pb
         --expected sum=${bcast}/test_data_set_0/output_0.pb)
expect_status(0 "${status}" "run with --inputs given twice" "${out}")
run_weir(out status run ${bcast}/model.onnx
         --inputs x=${bcast}/test_data_set_0/input_0.pb
                  y=${bcast}/test_data_set_0/input_1.pb
         --expected sum=${node}/test_add/test_data_set_0/output_0.pb)
expect_status(1 "${status}" "run with a wrong expectation" "${out}")
if(NOT out MATCHES "MISMATCH")
  message(FATAL_ERROR "run with a wrong expectation: no MISMATCH\n${out}")
endif()
run_weir(out status run ${bcast}/model.onnx --inputs nosuch=${bcast}/test_data_set_0/input_0.pb)
expect_status(1 "${status}" "run with an unknown input" "${out}")
run_weir(out status run ${bcast}/model.onnx --rtol abc)
expect_status(2 "${status}" "run with a bad --rtol" "${out}")
# A count is a whole number for every command (one option table each).
foreach(command run conformance)
  if(command STREQUAL "run")
    run_weir(out status run ${bcast}/model.onnx --threads 2.5)
  else()
    run_weir(out status conformance --threads 2.5)
  endif()
  expect_status(2 "${status}" "${command} --threads 2.5" "${out}")
  if(NOT out MATCHES "^weir: ${command}: --threads takes a whole number from 0 to 2147483647, got '2.5'")
    message(FATAL_ERROR "${command} --threads 2.5: unexpected message\n${out}")
  endif()
endforeach()

# transforms / matches / optimize: the registry as JSON, matches with
# reasons, the auto recipe verified and saved, the session replayed by run,
# a recipe file replayed, and a broken recipe rejected by name.
run_weir(out status transforms --json)
expect_status(0 "${status}" "transforms --json" "${out}")
foreach(id expand expand-all fold-constants fold-batchnorm remove-identity)
  if(NOT out MATCHES "\"id\": \"${id}\"")
    message(FATAL_ERROR "transforms --json lacks ${id}\n${out}")
  endif()
endforeach()
run_weir(out status transforms --tier warp)
expect_status(2 "${status}" "transforms --tier warp" "${out}")
set(cnn ${SOURCE_DIR}/resources/models/cnn.onnx)
run_weir(out status matches ${cnn} --transform fold-batchnorm)
expect_status(0 "${status}" "matches" "${out}")
if(NOT out MATCHES "fold-batchnorm +main: conv=%4 mid=%5 bn=%10 +ok")
  message(FATAL_ERROR "matches: unexpected output\n${out}")
endif()
run_weir(out status optimize ${cnn} --recipe auto --verify -o ${WORK_DIR}/cnn.weir)
expect_status(0 "${status}" "optimize auto" "${out}")
if(NOT out MATCHES "verify +verified" OR NOT EXISTS ${WORK_DIR}/cnn.weir)
  message(FATAL_ERROR "optimize: not verified or not saved\n${out}")
endif()
# One line per step, numbered in order, all before the tier summary (the
# lines are analyzed on a thread of their own, app/cli/step_report.h).
if(NOT out MATCHES "total +([0-9]+) steps")
  message(FATAL_ERROR "optimize: no total line\n${out}")
endif()
set(steps ${CMAKE_MATCH_1})
set(previous -1)
foreach(i RANGE 1 ${steps})
  string(FIND "${out}" "step ${i} " at)
  if(at LESS_EQUAL previous)
    message(FATAL_ERROR "optimize: step ${i} missing or out of order\n${out}")
  endif()
  set(previous ${at})
endforeach()
string(FIND "${out}" "tier import" tiers)
if(tiers LESS_EQUAL previous)
  message(FATAL_ERROR "optimize: a step line after the tier summary\n${out}")
endif()
run_weir(out status run ${WORK_DIR}/cnn.weir --check)
expect_status(0 "${status}" "run session" "${out}")
file(READ ${WORK_DIR}/cnn.weir session)
string(JSON recipe GET "${session}" recipe)
file(WRITE ${WORK_DIR}/recipe.json "${recipe}")
run_weir(out status optimize ${cnn} --recipe ${WORK_DIR}/recipe.json --verify)
expect_status(0 "${status}" "optimize recipe file" "${out}")
string(JSON hash GET "${session}" hash)
if(NOT out MATCHES "hash ${hash}")
  message(FATAL_ERROR "replaying the recipe gave another hash than ${hash}\n${out}")
endif()
string(REPLACE "fold-batchnorm" "fold-nothing" bad "${recipe}")
file(WRITE ${WORK_DIR}/bad.json "${bad}")
run_weir(out status optimize ${cnn} --recipe ${WORK_DIR}/bad.json)
expect_status(1 "${status}" "optimize bad recipe" "${out}")
if(NOT out MATCHES "recipe step 1 \\(fold-nothing\\).*unknown transformation 'fold-nothing'")
  message(FATAL_ERROR "optimize: unexpected error for a bad recipe\n${out}")
endif()

# run --loop-ir writes the loop IR the backend compiled.
run_weir(out status run ${cnn} --loop-ir ${WORK_DIR}/cnn.loop)
expect_status(0 "${status}" "run --loop-ir" "${out}")
file(READ ${WORK_DIR}/cnn.loop loop)
if(NOT loop MATCHES "for i1 in 0:16 \\{  # relu1.map")
  message(FATAL_ERROR "run --loop-ir: unexpected loop IR\n${loop}")
endif()
# The bounds proof leaves the bundled CNN without a guard; --checked guards
# every access, and the session still agrees with the interpreter.
if(loop MATCHES "checked ")
  message(FATAL_ERROR "run: a guard is left in the bundled CNN\n${loop}")
endif()
run_weir(out status run ${WORK_DIR}/cnn.weir --checked --check
         --loop-ir ${WORK_DIR}/cnn_checked.loop)
expect_status(0 "${status}" "run --checked --check" "${out}")
file(READ ${WORK_DIR}/cnn_checked.loop loop)
if(NOT loop MATCHES "checked [a-z_0-9]+\\[")
  message(FATAL_ERROR "run --checked: no guarded access in the loop IR\n${loop}")
endif()

# The limits (ir/limits.h): a symbol bound to a huge value, and a tensor
# past 4 GiB, are refused by name before anything is allocated.
run_weir(out status run ${SOURCE_DIR}/resources/models/mlp.onnx
         --dim N=100000000000)
expect_status(1 "${status}" "run --dim N=1e11" "${out}")
if(NOT out MATCHES "symbol 'N' is bound to 100000000000, more than the limit")
  message(FATAL_ERROR "run --dim N=1e11: not refused by the limit\n${out}")
endif()
run_weir(out status run ${SOURCE_DIR}/resources/models/mlp.onnx
         --dim N=10000000)
expect_status(1 "${status}" "run --dim N=1e7" "${out}")
if(NOT out MATCHES "container '[a-z0-9_]+' would take [0-9.]+ GiB, more than the limit of 4.0 GiB")
  message(FATAL_ERROR "run --dim N=1e7: not refused by the limit\n${out}")
endif()

# An input that decides sizes (ReduceSum's axes in ONNX's own node test):
# without its value, run names it and says how to give it; with it, the
# value is fixed at load and the result matches the test's.
set(reduce_sum /usr/share/libonnx-testdata/data/node/test_reduce_sum_keepdims_random)
run_weir(out status run ${reduce_sum}/model.onnx)
expect_status(1 "${status}" "run without the axes" "${out}")
if(NOT out MATCHES "input 'axes' decides sizes \\(it is the axes of node 'ReduceSum_0' \\(ReduceSum\\)\\); give its value with --inputs axes=FILE")
  message(FATAL_ERROR "run without the axes: not named\n${out}")
endif()
run_weir(out status run ${reduce_sum}/model.onnx
         --inputs data=${reduce_sum}/test_data_set_0/input_0.pb
                  axes=${reduce_sum}/test_data_set_0/input_1.pb
         --expected reduced=${reduce_sum}/test_data_set_0/output_0.pb)
expect_status(0 "${status}" "run with the axes" "${out}")
if(NOT out MATCHES "fixed        input 'axes' = \\[1\\] at load")
  message(FATAL_ERROR "run with the axes: not reported as fixed\n${out}")
endif()

# Plugins. The default folders are a convenience: a broken plugin there,
# or a `weir` package that does not import, is one warning line naming the
# folder and the reason, and a command that applies no plugin still works.
# A folder named with --plugins is a request: the same problems there are
# errors (status 1).
function(run_weir_env out_var status_var env)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${WEIR} ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${status_var} "${status}" PARENT_SCOPE)
endfunction()

function(expect_one_warning what output pattern)
  string(REGEX MATCHALL "weir: warning:[^\n]*" warnings "${output}")
  list(LENGTH warnings count)
  if(NOT count EQUAL 1 OR NOT warnings MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected one warning line matching "
                        "'${pattern}', got\n${output}")
  endif()
endfunction()

set(broken_dir ${WORK_DIR}/broken-plugins)
file(MAKE_DIRECTORY ${broken_dir})
file(WRITE ${broken_dir}/broken.py "import weir\nraise RuntimeError('deliberately broken')\n")
run_weir_env(out status "WEIR_PLUGIN_PATH=${broken_dir}" transforms)
expect_status(0 "${status}" "transforms with a broken default plugin" "${out}")
expect_one_warning("transforms with a broken default plugin" "${out}"
                   "${broken_dir}.*deliberately broken")
if(NOT out MATCHES "fusion +map-fusion")
  message(FATAL_ERROR "transforms with a broken default plugin: no list\n${out}")
endif()
run_weir(out status transforms --no-plugins --plugins ${broken_dir})
expect_status(1 "${status}" "transforms --plugins with a broken plugin" "${out}")
if(NOT out MATCHES "^weir: error: cannot load the plugins of ${broken_dir}: .*deliberately broken")
  message(FATAL_ERROR "--plugins with a broken plugin: unexpected error\n${out}")
endif()
run_weir(out status transforms --no-plugins --plugins ${WORK_DIR}/no-such-folder)
expect_status(1 "${status}" "transforms --plugins with a missing folder" "${out}")

# The package itself does not import (as on a machine where the `weir`
# target was built without the Python module): PYTHONPATH puts a `weir`
# package first whose import fails the way a missing extension does.
set(fake ${WORK_DIR}/fake-package)
file(MAKE_DIRECTORY ${fake}/weir)
file(WRITE ${fake}/weir/__init__.py "raise ModuleNotFoundError(\"No module named 'weir._weir'\")\n")
run_weir_env(out status "PYTHONPATH=${fake}" optimize ${cnn} --recipe auto)
expect_status(0 "${status}" "optimize without the Python package" "${out}")
expect_one_warning("optimize without the Python package" "${out}"
                   "default plugin folders.*No module named 'weir._weir'")
run_weir_env(out status "PYTHONPATH=${fake}" transforms --plugins ${SOURCE_DIR}/plugins)
expect_status(1 "${status}" "--plugins without the Python package" "${out}")
if(NOT out MATCHES "cannot load the plugins of ${SOURCE_DIR}/plugins: .*No module named 'weir._weir'")
  message(FATAL_ERROR "--plugins without the Python package: unexpected error\n${out}")
endif()
