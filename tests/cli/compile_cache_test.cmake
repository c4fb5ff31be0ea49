# The compile cache on disk across processes, run with `cmake -P`: two
# `weir run` processes filling one empty cache at once leave entries a third
# run takes whole (every piece from the cache, same outputs as the
# interpreter); damaged entries are rebuilt, not trusted.

set(cache ${WORK_DIR}/cache)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(model ${SOURCE_DIR}/resources/models/transformer.onnx)
set(env ${CMAKE_COMMAND} -E env WEIR_CACHE_DIR=${cache})

# Runs `weir ARGS...` with the cache; its output in `out`. Any exit status
# but 0 fails the test, named `what`.
function(weir_ok what)
  execute_process(COMMAND ${env} ${WEIR} ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what}: exit status ${status}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect_run what want_cached)
  weir_ok("${what}" run ${model} --check)
  if(NOT out MATCHES "compile +[0-9.]+ ms \\(([0-9]+) pieces?, ([0-9]+) from the compile cache, [0-9]+ equal to another\\)")
    message(FATAL_ERROR "${what}: no compile line\n${out}")
  endif()
  set(pieces ${CMAKE_MATCH_1})
  set(cached ${CMAKE_MATCH_2})
  if(want_cached STREQUAL "all")
    set(want_cached ${pieces})
  endif()
  if(NOT cached EQUAL want_cached)
    message(FATAL_ERROR "${what}: ${cached} of ${pieces} pieces from the cache, expected ${want_cached}\n${out}")
  endif()
  if(out MATCHES "MISMATCH")
    message(FATAL_ERROR "${what}: outputs differ from the interpreter\n${out}")
  endif()
  set(pieces ${pieces} PARENT_SCOPE)
endfunction()

# Two processes at once (a pipeline runs its commands concurrently), each
# writing its output to a file of its own.
execute_process(COMMAND sh -c "\"$0\" \"$@\" > '${WORK_DIR}/first.txt' 2>&1"
                        ${env} ${WEIR} run ${model} --check
                COMMAND sh -c "\"$0\" \"$@\" > '${WORK_DIR}/second.txt' 2>&1"
                        ${env} ${WEIR} run ${model} --check
                RESULTS_VARIABLE statuses)
if(NOT statuses STREQUAL "0;0")
  file(READ ${WORK_DIR}/first.txt first)
  file(READ ${WORK_DIR}/second.txt second)
  message(FATAL_ERROR "two runs at once: exit statuses ${statuses}\n"
                      "first:\n${first}\nsecond:\n${second}")
endif()
file(GLOB temporaries ${cache}/*.tmp.*)
if(temporaries)
  message(FATAL_ERROR "temporary files left in the cache: ${temporaries}")
endif()
expect_run("a third run" all)

# Damage every entry (truncate half of them, scribble over the others):
# everything is compiled again, and stored whole again.
file(GLOB entries ${cache}/*.wobj)
list(LENGTH entries count)
if(NOT count GREATER 1)
  message(FATAL_ERROR "expected several cache entries, found ${count}")
endif()
set(i 0)
foreach(entry ${entries})
  math(EXPR odd "${i} % 2")
  if(odd)
    file(WRITE ${entry} "WEIROBJ1 scribbled over")
  else()
    file(READ ${entry} head LIMIT 20 HEX)
    file(WRITE ${entry} "${head}")
  endif()
  math(EXPR i "${i} + 1")
endforeach()
expect_run("after damage" 0)
expect_run("after rebuilding" all)

# `weir optimize -o SESSION` leaves the session's program in the cache, so
# the `weir run SESSION` that usually follows neither replays the recipe
# nor compiles a piece the optimize's program did not need; a damaged
# program entry is replayed instead, and written again.
weir_ok(optimize optimize ${model} --recipe auto -o ${WORK_DIR}/auto.weir
        --no-plugins)
if(NOT out MATCHES "hash ([0-9a-f]+)\n")
  message(FATAL_ERROR "optimize printed no hash\n${out}")
endif()
set(program ${cache}/${CMAKE_MATCH_1}.wprog)
if(NOT EXISTS ${program})
  message(FATAL_ERROR "optimize -o left no program in the cache (${program})")
endif()
function(expect_session what want)
  weir_ok("${what}" run ${WORK_DIR}/auto.weir --check --no-plugins)
  if(NOT out MATCHES "open +[0-9.]+ ms \\(session: ${want}")
    message(FATAL_ERROR "${what}: expected 'session: ${want}'\n${out}")
  endif()
endfunction()
expect_session("the session after optimize" "its program from the cache")
file(WRITE ${program} "{ damaged")
expect_session("a damaged program entry" "recipe replayed")
expect_session("the entry written again" "its program from the cache")
