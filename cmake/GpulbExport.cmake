# gpulb as a CMake package: `cmake --install BUILD --prefix P` puts the libraries, their public
# headers and gpulbConfig.cmake under P, and a project of its own then says
#   find_package(gpulb REQUIRED)              # with -DCMAKE_PREFIX_PATH=P
#   target_link_libraries(app PRIVATE gpulb::cli)
# to run the gpulb command line over a registry with its own scenarios or policies
# (examples/own-policy, examples/own-scenario; scripts/check-examples.sh builds both from P).
#
# Exported targets: gpulb::tracing, gpulb::core (the runtime and the CPU backend), gpulb::builtin
# (the shipped registry), gpulb::cli (the command line), and gpulb::kernels (the CUDA backend)
# where it was built. gpulb::scenarios and gpulb::distributed come along as link dependencies
# only: their headers are not installed, a program reaches the shipped scenarios through the
# registry. The static libraries and headers are the `dev` component, which the Debian package
# leaves out (GpulbPackage.cmake): it carries the programs.
include(CMakePackageConfigHelpers)
set(GPULB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpulb)

set(_gpulb_exported gpulb_zstd gpulb_tracing gpulb_core gpulb_scenarios gpulb_builtin gpulb_tools gpulb_cli)
set_target_properties(gpulb_tracing PROPERTIES EXPORT_NAME tracing)
set_target_properties(gpulb_core PROPERTIES EXPORT_NAME core)
set_target_properties(gpulb_scenarios PROPERTIES EXPORT_NAME scenarios)
set_target_properties(gpulb_builtin PROPERTIES EXPORT_NAME builtin)
set_target_properties(gpulb_tools PROPERTIES EXPORT_NAME tools)
set_target_properties(gpulb_cli PROPERTIES EXPORT_NAME cli)
set_target_properties(gpulb_zstd PROPERTIES EXPORT_NAME zstd)
set(_gpulb_header_dirs tracing/include core/include core/cpu/include builtin/include tools/include)
if(TARGET gpulb_kernels)
  list(APPEND _gpulb_exported gpulb_kernels)
  set_target_properties(gpulb_kernels PROPERTIES EXPORT_NAME kernels)
  list(APPEND _gpulb_header_dirs kernels/include core/cuda/include)
endif()
if(TARGET gpulb_distributed)
  list(APPEND _gpulb_exported gpulb_distributed)
  set_target_properties(gpulb_distributed PROPERTIES EXPORT_NAME distributed)
endif()

install(TARGETS ${_gpulb_exported} EXPORT gpulbTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
foreach(_dir ${_gpulb_header_dirs})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
install(EXPORT gpulbTargets NAMESPACE gpulb:: DESTINATION ${GPULB_CMAKE_DIR} COMPONENT dev)

# What gpulbConfig.cmake must find again for the exported link interfaces (gpulbConfig.cmake.in).
set(GPULB_ZSTD_FROM_PKGCONFIG OFF)
if(TARGET PkgConfig::ZSTD)
  set(GPULB_ZSTD_FROM_PKGCONFIG ON)
endif()
set(GPULB_CUDA_TOOLKIT_ROOT "")
if(GPULB_HAVE_CUDA)
  get_filename_component(GPULB_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpulbConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/gpulbConfig.cmake
                              INSTALL_DESTINATION ${GPULB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpulbConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpulbConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gpulbConfigVersion.cmake
        DESTINATION ${GPULB_CMAKE_DIR} COMPONENT dev)
