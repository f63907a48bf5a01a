# Writes OUT with the commit the binaries are built from ("+dirty" when tracked files
# differ from it). Run at every build; the file is rewritten only when that changes.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE not_a_checkout)
if(not_a_checkout)
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
    OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    string(APPEND commit "+dirty")
  endif()
endif()
set(content "// Generated at build time by cmake/write_build_commit.cmake.\n#include \"profiler/build_commit.hpp\"\n\nnamespace shapescope::profiler {\nconst char* const kBuildCommit = \"${commit}\";\n}\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
