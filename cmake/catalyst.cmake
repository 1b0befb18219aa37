# ParaView Catalyst for in-situ visualisation (include/shard/insitu.h, io/catalyst_adaptor.cxx).
#
# Sets SHARD_CATALYST_FOUND and SHARD_PARAVIEW_VERSION, and defines shard_catalyst_setup(target), which builds the
# Catalyst module and gives the target what loads it, when Catalyst is on.  SHARD_WITH_CATALYST defaults to ON
# when a ParaView CMake package is visible, so the default build needs nothing and says "Catalyst: off" where
# ParaView is absent.  C++ is enabled only when Catalyst is on: the adaptor is the project's one C++ file.

set(SHARD_CATALYST_DEFAULT OFF)
if(ParaView_DIR)
  set(SHARD_CATALYST_DEFAULT ON)
else()
  # A cheap look for the package file, without loading it (loading needs C++ and the workarounds below).
  set(_shard_pv_globs)
  foreach(prefix IN LISTS CMAKE_PREFIX_PATH CMAKE_SYSTEM_PREFIX_PATH)
    foreach(lib lib lib64 lib/${CMAKE_LIBRARY_ARCHITECTURE})
      list(APPEND _shard_pv_globs "${prefix}/${lib}/cmake/paraview-*/paraview-config.cmake"
                                  "${prefix}/${lib}/cmake/paraview-*/ParaViewConfig.cmake")
    endforeach()
  endforeach()
  file(GLOB _shard_pv_configs ${_shard_pv_globs})
  if(_shard_pv_configs)
    set(SHARD_CATALYST_DEFAULT ON)
  endif()
endif()
option(SHARD_WITH_CATALYST "In-situ visualisation with ParaView Catalyst (default: ON when ParaView is found)"
       ${SHARD_CATALYST_DEFAULT})

set(SHARD_CATALYST_FOUND OFF)
set(SHARD_PARAVIEW_VERSION "")
if(SHARD_WITH_CATALYST)
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
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
    endif()
  endif()
  if(NOT SHARD_CATALYST_FOUND)
    message(WARNING "ParaView Catalyst not found (or no C++ compiler): in-situ visualisation is off "
                    "(apt-get install paraview-dev python3-paraview g++, or configure with -DSHARD_WITH_CATALYST=OFF)")
  endif()
endif()
message(STATUS "Catalyst: ${SHARD_CATALYST_FOUND} ${SHARD_PARAVIEW_VERSION}")

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
