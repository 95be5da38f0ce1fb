# The .deb that scripts/package builds (`cpack --preset package`, DEB generator)
# from the `package` configure preset: a portable x86-64-v2 Release build
# installed under /usr. Runtime dependencies come from dpkg-shlibdeps, so they
# name the libraries the binaries really link, at the versions they need.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attention-lab)
set(CPACK_PACKAGE_VENDOR "Attention Lab maintainers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see and change every number of self-attention")
# The extended description, wrapped for `dpkg -s` (CPack indents it).
set(CPACK_PACKAGE_DESCRIPTION
    "Attention Lab steps through the self-attention of a Transformer,
softmax(QK^T/sqrt(d_k))V with causal masks and several heads, and shows
every matrix as an editable heatmap. Hovering a cell lights up the cells it
is computed from, and dragging an input or a weight updates everything below
it. Built-in lessons, a presenter mode and quizzes make it a teaching tool.
.
This package holds the desktop app (attention-lab), the command-line tool
(attention-lab-cli), the built-in lessons and the desktop integration.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/StripForDebian.cmake)  # strips like dh_strip
# Directories CPack creates itself get 0755 whatever the umask is.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # attention-lab_0.1.0-1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Attention Lab maintainers <maintainers@users.noreply.a-seed-5764b919.example>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Not a linked library, so dpkg-shlibdeps cannot see it: the app's text font.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
# Loaded at run time when installed (core/src/base/gemm.cpp): a model's forward
# runs its products on OpenBLAS, 1.1–1.3× faster here than on Eigen alone.
# libegl-mesa0: libEGL's vendor, loaded at run time, with which --export and
# --screenshot draw off screen where there is no display.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-openmp, libegl-mesa0")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/deb)
include(CPack)
