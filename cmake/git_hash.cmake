# Writes OUT (a header defining SHARD_GIT_HASH, the commit the build is made from) when it differs from what is
# there; run at every build (CMakeLists.txt), so `shard --version` names the commit of the sources it was
# compiled from, not the one of the configure step.  Usage: cmake -DSRC=<source dir> -DOUT=<header> -P this.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT hash)
  set(hash "unknown")
endif()
set(content "#define SHARD_GIT_HASH \"${hash}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
