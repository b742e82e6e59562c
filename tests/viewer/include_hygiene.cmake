# cmake -DROOT=<source tree> -DDIRS=<folder of <target>.txt include lists> -P include_hygiene.cmake
#
# Fails, naming the offender, where a viewer target's include path holds the repository root or a
# folder of tools/ or kernels/, or where a file under viewer/ includes a header of those folders.
set(problems "")

file(GLOB lists "${DIRS}/*.txt")
if(NOT lists)
  message(FATAL_ERROR "no include lists in ${DIRS}: is the viewer built?")
endif()
foreach(list_file IN LISTS lists)
  get_filename_component(target "${list_file}" NAME_WE)
  file(STRINGS "${list_file}" dirs)
  foreach(dir IN LISTS dirs)
    file(TO_CMAKE_PATH "${dir}" dir)
    string(REGEX REPLACE "/$" "" dir "${dir}")
    if(dir STREQUAL ROOT)
      string(APPEND problems "  ${target}: the repository root is on its include path\n")
    elseif(dir MATCHES "^${ROOT}/(tools|kernels)(/|$)")
      string(APPEND problems "  ${target}: ${dir} is on its include path\n")
    endif()
  endforeach()
endforeach()

# Headers of tools/ and kernels/ as they could be named: by a path from the root, or by the
# gpulb/tools/, gpulb/kernels/ and gpulb/cuda/ (the CUDA backend's host helpers) prefixes.
file(GLOB_RECURSE sources "${ROOT}/viewer/*.cpp" "${ROOT}/viewer/*.hpp" "${ROOT}/viewer/*.h")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    if(line MATCHES "[\"<](\\./|\\.\\./)*(tools|kernels|gpulb/tools|gpulb/kernels|gpulb/cuda)/")
      file(RELATIVE_PATH rel "${ROOT}" "${source}")
      string(STRIP "${line}" line)
      string(APPEND problems "  ${rel}: ${line}\n")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "the viewer reaches past tracing and builtin:\n${problems}")
endif()
list(LENGTH lists n_targets)
list(LENGTH sources n_sources)
message(STATUS "viewer include hygiene: ${n_targets} targets, ${n_sources} files clean")
