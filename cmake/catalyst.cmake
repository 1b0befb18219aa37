# ParaView Catalyst for in-situ visualisation (include/shard/insitu.h, io/catalyst_adaptor.cxx).
#
# SHARD_WITH_CATALYST is a cache string with three values (docs/insitu.md, "Building with Catalyst"):
#   AUTO (default)  Catalyst is on when a ParaView CMake package is found.  The look is repeated at every
#                   configure and its result is never cached, so a build folder configured before ParaView was
#                   installed picks it up at the next configure (scripts/setup.sh configures every time).
#   ON              Catalyst is required: configuring fails, saying why, when ParaView or a C++ compiler is missing.
#   OFF             Catalyst is never built, even where ParaView is installed.
# (The boolean spellings TRUE/YES/1 and FALSE/NO/0 mean ON and OFF.)  A value given with -D stays in the cache, so
# an explicit choice sticks; -DSHARD_WITH_CATALYST=AUTO returns to detection.
#
# Sets SHARD_CATALYST_FOUND (also cached, INTERNAL, as the result of the last configure) and SHARD_PARAVIEW_VERSION,
# SHARD_CATALYST_MODE (AUTO, ON or OFF), SHARD_CATALYST_REASON (why Catalyst is off, empty when on) and
# SHARD_PARAVIEW_CONFIG (the ParaView package file the cheap look saw, if any: tests/insitu/enabled.sh checks it),
# and defines shard_catalyst_setup(target), which builds the Catalyst module and gives the target what loads it,
# when Catalyst is on.  C++ is enabled only when Catalyst is on or ParaView is seen: the adaptor is the project's
# one C++ file.

# Build folders configured by earlier versions hold SHARD_WITH_CATALYST as a BOOL option whose OFF was usually the
# automatic default computed before ParaView was installed (the defect this file fixes): such an entry becomes
# AUTO, once.  A value given on this configure's command line is kept: an untyped -D makes the entry UNINITIALIZED
# for this run, a typed one that changes the value differs from the cache file on disk (only re-giving the cached
# value as -DSHARD_WITH_CATALYST:BOOL=... is taken for the old default).
if(DEFINED CACHE{SHARD_WITH_CATALYST} AND NOT DEFINED CACHE{SHARD_CATALYST_TRISTATE})
  get_property(_shard_type CACHE SHARD_WITH_CATALYST PROPERTY TYPE)
  set(_shard_old "")
  if(_shard_type STREQUAL "BOOL" AND EXISTS "${CMAKE_BINARY_DIR}/CMakeCache.txt")
    file(STRINGS "${CMAKE_BINARY_DIR}/CMakeCache.txt" _shard_old REGEX "^SHARD_WITH_CATALYST:BOOL=")
    string(REGEX REPLACE "^SHARD_WITH_CATALYST:BOOL=" "" _shard_old "${_shard_old}")
  endif()
  if(_shard_type STREQUAL "BOOL" AND _shard_old STREQUAL "${SHARD_WITH_CATALYST}")
    message(STATUS "SHARD_WITH_CATALYST: the boolean ${_shard_old} cached by an earlier version of Shard becomes AUTO "
                   "(configure with -DSHARD_WITH_CATALYST=OFF to keep Catalyst out)")
    set_property(CACHE SHARD_WITH_CATALYST PROPERTY VALUE AUTO)
  endif()
  set_property(CACHE SHARD_WITH_CATALYST PROPERTY TYPE STRING)
endif()
set(SHARD_CATALYST_TRISTATE 1 CACHE INTERNAL "SHARD_WITH_CATALYST is AUTO/ON/OFF in this build folder")
set(SHARD_WITH_CATALYST AUTO CACHE STRING
    "In-situ visualisation with ParaView Catalyst: AUTO (on when ParaView is found, looked for at every configure), ON (required), OFF")
set_property(CACHE SHARD_WITH_CATALYST PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SHARD_WITH_CATALYST}" _shard_mode)
if(_shard_mode MATCHES "^(ON|TRUE|YES|Y|1)$")
  set(SHARD_CATALYST_MODE ON)
elseif(_shard_mode MATCHES "^(OFF|FALSE|NO|N|0)$")
  set(SHARD_CATALYST_MODE OFF)
elseif(_shard_mode STREQUAL "AUTO")
  set(SHARD_CATALYST_MODE AUTO)
else()
  message(FATAL_ERROR "SHARD_WITH_CATALYST must be AUTO, ON or OFF, got '${SHARD_WITH_CATALYST}'")
endif()

# The cheap look for ParaView's package file, without loading it (loading needs C++ and the workarounds below):
# ParaView_DIR, then <prefix>/lib*/cmake/paraview-*/ under ParaView_ROOT, CMAKE_PREFIX_PATH (variable and
# environment) and the system prefixes, honouring CMAKE_IGNORE_PATH and CMAKE_IGNORE_PREFIX_PATH (and their
# CMAKE_SYSTEM_ forms) as find_package does, so ParaView can be hidden from both
# (tests/setup/catalyst_reconfigure.sh does).  Never cached.
set(SHARD_PARAVIEW_CONFIG "")
set(_shard_pv_dirs)
if(ParaView_DIR)
  list(APPEND _shard_pv_dirs "${ParaView_DIR}")
endif()
if(DEFINED ENV{ParaView_DIR})
  list(APPEND _shard_pv_dirs "$ENV{ParaView_DIR}")
endif()
set(_shard_prefixes ${ParaView_ROOT} ${CMAKE_PREFIX_PATH})
foreach(v ParaView_ROOT CMAKE_PREFIX_PATH)
  if(DEFINED ENV{${v}})
    string(REPLACE ":" ";" _shard_env "$ENV{${v}}")
    list(APPEND _shard_prefixes ${_shard_env})
  endif()
endforeach()
list(APPEND _shard_prefixes ${CMAKE_SYSTEM_PREFIX_PATH})
set(_shard_ignore_prefixes)
foreach(prefix IN LISTS CMAKE_IGNORE_PREFIX_PATH CMAKE_SYSTEM_IGNORE_PREFIX_PATH)
  cmake_path(SET prefix NORMALIZE "${prefix}/")
  list(APPEND _shard_ignore_prefixes "${prefix}")
endforeach()
foreach(prefix IN LISTS _shard_prefixes)
  cmake_path(SET prefix NORMALIZE "${prefix}/")
  if(prefix IN_LIST _shard_ignore_prefixes)
    continue()
  endif()
  foreach(lib lib lib64 lib/${CMAKE_LIBRARY_ARCHITECTURE})
    file(GLOB _shard_found LIST_DIRECTORIES true "${prefix}${lib}/cmake/paraview-*")
    list(APPEND _shard_pv_dirs ${_shard_found})
  endforeach()
endforeach()
set(_shard_ignore)
foreach(dir IN LISTS CMAKE_IGNORE_PATH CMAKE_SYSTEM_IGNORE_PATH)
  cmake_path(SET dir NORMALIZE "${dir}/")
  list(APPEND _shard_ignore "${dir}")
endforeach()
foreach(dir IN LISTS _shard_pv_dirs)
  cmake_path(SET dir NORMALIZE "${dir}/")  # one trailing slash, no "//" or "/./": as in the ignore list
  if(NOT dir IN_LIST _shard_ignore)
    foreach(name paraview-config.cmake ParaViewConfig.cmake)
      if(NOT SHARD_PARAVIEW_CONFIG AND EXISTS "${dir}${name}")
        set(SHARD_PARAVIEW_CONFIG "${dir}${name}")
      endif()
    endforeach()
  endif()
endforeach()

set(SHARD_CATALYST_FOUND OFF)
set(SHARD_PARAVIEW_VERSION "")
set(SHARD_CATALYST_REASON "")
set(_shard_install "apt-get install paraview-dev python3-paraview g++ libfreetype-dev libx11-dev libxml2-dev, or SHARD_WITH_CATALYST=1 ./scripts/setup.sh")
if(SHARD_CATALYST_MODE STREQUAL "OFF")
  set(SHARD_CATALYST_REASON "left out by choice")
elseif(SHARD_CATALYST_MODE STREQUAL "AUTO" AND NOT SHARD_PARAVIEW_CONFIG)
  set(SHARD_CATALYST_REASON "no ParaView CMake package found (${_shard_install})")
else()
  include(CheckLanguage)
  # check_language caches a missing compiler as NOTFOUND and would not look again: look again.
  if(DEFINED CACHE{CMAKE_CXX_COMPILER} AND NOT CMAKE_CXX_COMPILER)
    unset(CMAKE_CXX_COMPILER CACHE)
  endif()
  check_language(CXX)
  if(NOT CMAKE_CXX_COMPILER)
    set(SHARD_CATALYST_REASON "no C++ compiler (apt-get install g++)")
  else()
    enable_language(CXX)
    set(CMAKE_CXX_STANDARD 17)
    set(CMAKE_CXX_STANDARD_REQUIRED ON)
    set(CMAKE_CXX_EXTENSIONS OFF)
    set(CMAKE_CXX_FLAGS_RELEASE "-O3 -DNDEBUG")
    # Debian's ParaView 5.11 exports link interfaces that name targets its package file never creates
    # (Freetype::Freetype, X11::X11, GLEW::GLEW, LibXml2::LibXml2, hdf5::hdf5(_hl), NetCDF::NetCDF,
    # Boost::boost): find what is installed, and stand in for the rest with empty targets.  The stand-ins are
    # safe because ParaView's shared libraries record their own dependencies; our link line needs none of them.
    find_package(Freetype QUIET)
    find_package(X11 QUIET)
    find_package(GLEW QUIET)
    find_package(LibXml2 QUIET)
    foreach(t Freetype::Freetype X11::X11 GLEW::GLEW LibXml2::LibXml2 hdf5::hdf5 hdf5::hdf5_hl NetCDF::NetCDF
              Boost::boost)
      if(NOT TARGET ${t})
        add_library(${t} INTERFACE IMPORTED)
      endif()
    endforeach()
    find_package(ParaView QUIET COMPONENTS Catalyst PythonCatalyst)
    if(ParaView_FOUND AND TARGET ParaView::PythonCatalyst AND TARGET VTK::ParallelMPI AND TARGET Python3::Python)
      set(SHARD_CATALYST_FOUND ON)
      set(SHARD_PARAVIEW_VERSION ${ParaView_VERSION})
    elseif(NOT ParaView_FOUND AND ParaView_DIR)
      set(SHARD_CATALYST_REASON "ParaView's CMake package in ${ParaView_DIR} did not load: ${ParaView_NOT_FOUND_MESSAGE} (${_shard_install})")
    elseif(NOT ParaView_FOUND)
      set(SHARD_CATALYST_REASON "no ParaView CMake package found (${_shard_install}, or -DParaView_DIR=<folder of paraview-config.cmake>)")
    else()
      set(SHARD_CATALYST_REASON "ParaView ${ParaView_VERSION} lacks ParaView::PythonCatalyst, VTK::ParallelMPI or Python3::Python (${_shard_install})")
    endif()
  endif()
  if(NOT SHARD_CATALYST_FOUND)
    if(SHARD_CATALYST_MODE STREQUAL "ON")
      message(FATAL_ERROR "SHARD_WITH_CATALYST=ON, but Catalyst cannot be built: ${SHARD_CATALYST_REASON}.  "
                          "Configure with -DSHARD_WITH_CATALYST=AUTO (on when ParaView is found) or OFF to build without it.")
    endif()
    message(WARNING "ParaView Catalyst is off although ParaView was seen (${SHARD_PARAVIEW_CONFIG}): "
                    "${SHARD_CATALYST_REASON}; configure with -DSHARD_WITH_CATALYST=OFF to build without it on purpose")
  endif()
endif()
string(REPLACE ";" "," SHARD_CATALYST_REASON "${SHARD_CATALYST_REASON}")  # one argument of a test command
set(SHARD_CATALYST_FOUND ${SHARD_CATALYST_FOUND} CACHE INTERNAL "Catalyst is built in (result of the last configure)")
if(SHARD_CATALYST_FOUND)
  message(STATUS "Catalyst: on (ParaView ${SHARD_PARAVIEW_VERSION}; SHARD_WITH_CATALYST=${SHARD_WITH_CATALYST})")
else()
  message(STATUS "Catalyst: off (SHARD_WITH_CATALYST=${SHARD_WITH_CATALYST}: ${SHARD_CATALYST_REASON})")
endif()

# Builds the Catalyst module libshard_catalyst.so (io/catalyst_adaptor.cxx, linked with ParaView) and gives
# `target` the C side that loads it on demand (io/insitu.c, which the caller keeps in its sources only when
# Catalyst is on; io/insitu_off.c otherwise).  Only the module links ParaView: shard itself stays free of it, so
# runs without a Catalyst script load none of ParaView's libraries.
function(shard_catalyst_setup target)
  if(NOT SHARD_CATALYST_FOUND)
    return()
  endif()
  add_library(shard_catalyst MODULE ${CMAKE_SOURCE_DIR}/io/catalyst_adaptor.cxx)
  target_include_directories(shard_catalyst PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/io)
  target_compile_definitions(shard_catalyst PRIVATE SHARD_LAYER_IO=1)
  target_link_libraries(shard_catalyst PRIVATE ParaView::PythonCatalyst ParaView::Catalyst VTK::ParallelMPI
                        VTK::CommonDataModel VTK::PythonInterpreter VTK::Python MPI::MPI_C)
  # VTK links libpython only into executables (VTK::PythonUsed); the module is what embeds Python here.
  target_link_libraries(shard_catalyst PRIVATE Python3::Python)
  add_dependencies(${target} shard_catalyst)
  target_compile_definitions(${target} PUBLIC SHARD_HAVE_CATALYST=1
                             PRIVATE SHARD_CATALYST_MODULE_PATH="$<TARGET_FILE:shard_catalyst>"
                                     SHARD_PARAVIEW_VERSION="${SHARD_PARAVIEW_VERSION}")
  target_link_libraries(${target} PUBLIC ${CMAKE_DL_LIBS})
endfunction()
