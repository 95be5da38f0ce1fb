# CPACK_PRE_BUILD_SCRIPTS: runs on CPack's staging tree before the .deb is made,
# and strips the executables as Debian's dh_strip does (symbols, and the
# compilers' .comment and .note sections, which lintian reports as unneeded).
file(GLOB executables ${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr/bin/*)
foreach(exe ${executables})
  execute_process(COMMAND strip --remove-section=.comment --remove-section=.note --strip-unneeded ${exe}
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
