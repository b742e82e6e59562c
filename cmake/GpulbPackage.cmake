# `make package`: a Debian package (CPack's DEB generator) holding gpulb, gpulb-viewer, the
# lessons (compiled into both) and the shipped traces (share/gpulb/traces). Its runtime
# dependencies come from dpkg-shlibdeps (dpkg-dev) reading the two programs, plus the font and the
# X server the viewer's pictures need. Configure it with -DCMAKE_INSTALL_PREFIX=/usr (make package does).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpulb)
set(CPACK_PACKAGE_VENDOR "gpulb")
set(CPACK_PACKAGE_CONTACT "gpulb maintainers <gpulb@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "dynamic load balancing on GPUs, traced and replayed")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "gpulb runs the schedulers of four GPU load-balancing papers (host-fed task queues, work-stealing\n"
    "deques, static task lists, kernel combining, hybrid CPU+GPU) on GPUs and CPU threads, records\n"
    "what every block, SM and GPU did, and replays it in a desktop viewer with lessons.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xvfb, xauth")
set(CPACK_STRIP_FILES ON)
include(CPack)
