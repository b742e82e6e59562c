# `make package`: a Debian package (CPack's DEB generator) holding gpulb, gpulb-viewer, the
# lessons (compiled into both) and the shipped traces (share/gpulb/traces), not the libraries.
# Its runtime dependencies come from dpkg-shlibdeps (dpkg-dev) reading the two programs, plus the
# font and the X server the viewer's pictures need. `make package` packs for /usr
# (CPACK_PACKAGING_INSTALL_PREFIX): the programs find share/gpulb/traces beside their bin/,
# whatever prefix they were built for.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpulb)
set(CPACK_PACKAGE_VENDOR "gpulb")
# Who answers for the package: a lab that builds its own sets its address (-DGPULB_PACKAGE_CONTACT=...).
set(GPULB_PACKAGE_CONTACT "gpulb maintainers <gpulb@example.org>" CACHE STRING "Maintainer of the Debian package")
set(CPACK_PACKAGE_CONTACT "${GPULB_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "dynamic load balancing on GPUs, traced and replayed")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "gpulb runs the schedulers of four GPU load-balancing papers (host-fed task\n"
    "queues, work-stealing deques, static task lists, kernel combining, hybrid\n"
    "CPU+GPU) on GPUs and CPU threads, records what every block, SM and GPU did,\n"
    "and replays it in a desktop viewer with lessons.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xvfb, xauth")
set(CPACK_STRIP_FILES ON)
# The programs and their data (the default component); the libraries, headers and CMake package
# (component `dev`, GpulbExport.cmake) are for `cmake --install`, not for this package.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
# Debian's policy: a copyright file and a compressed changelog in share/doc/gpulb.
configure_file(${CMAKE_CURRENT_LIST_DIR}/package/changelog.in ${CMAKE_CURRENT_BINARY_DIR}/package/changelog @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/package/changelog)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/package/copyright ${CMAKE_CURRENT_BINARY_DIR}/package/changelog.gz
        DESTINATION share/doc/gpulb)
include(CPack)
