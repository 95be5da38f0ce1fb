# What `cmake --install BUILD --prefix P` puts under P besides the two
# executables (P/bin, app/CMakeLists.txt). The app finds its data relative to
# its own executable (app/gui/logic/data_paths.h), so P can be anywhere and
# the tree can be moved afterwards.
#   share/attention-lab/lessons/                    the built-in lessons
#   share/attention-lab/fonts/DejaVuSans.ttf        only with ATTENTION_LAB_BUNDLE_FONT
#   share/applications/attention-lab.desktop       the desktop entry (opens scenario and lesson files)
#   share/icons/hicolor/NxN/apps/attention-lab.png  the icon, 16 to 256 px, and scalable/apps/attention-lab.svg
#   share/mime/packages/attention-lab.xml           MIME types of scenario and lesson files
#   share/man/man1/attention-lab{,-cli}.1.gz       manual pages
#   share/doc/attention-lab/                        README, docs/*.md (and, for the .deb, copyright and changelog)
set(ATTENTION_LAB_DATA ${CMAKE_INSTALL_DATADIR}/attention-lab)
set(ATTENTION_LAB_DOC ${CMAKE_INSTALL_DATADIR}/doc/attention-lab)  # Debian's name, not GNUInstallDirs' attention_lab

install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/lessons DESTINATION ${ATTENTION_LAB_DATA})

# A tree that must run on machines without DejaVu (a tarball, a USB stick) can
# carry its own copy; a distribution package depends on fonts-dejavu-core instead.
option(ATTENTION_LAB_BUNDLE_FONT "Install DejaVuSans.ttf (from this machine) into share/attention-lab/fonts" OFF)
if(ATTENTION_LAB_BUNDLE_FONT)
  find_file(ATTENTION_LAB_DEJAVU DejaVuSans.ttf PATHS /usr/share/fonts/truetype/dejavu NO_DEFAULT_PATH REQUIRED)
  install(FILES ${ATTENTION_LAB_DEJAVU} DESTINATION ${ATTENTION_LAB_DATA}/fonts)
  install(FILES /usr/share/doc/fonts-dejavu-core/copyright DESTINATION ${ATTENTION_LAB_DATA}/fonts
          RENAME DejaVu-LICENSE OPTIONAL)
endif()

if(ATTENTION_LAB_BUILD_GUI)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/attention-lab.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/attention-lab-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
          RENAME attention-lab.xml)
  foreach(size 16 22 24 32 48 64 128 256)
    install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attention-lab-${size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps RENAME attention-lab.png)
  endforeach()
  install(FILES ${PROJECT_SOURCE_DIR}/assets/icons/attention-lab.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

# Manual pages and the Debian changelog go in compressed with gzip -9n, as
# Debian policy wants (no name or time stamp inside, so the .deb is reproducible).
find_program(ATTENTION_LAB_GZIP gzip REQUIRED)
set(compressed "")
set(pages attention-lab-cli.1)
if(ATTENTION_LAB_BUILD_GUI)
  list(APPEND pages attention-lab.1)
endif()
foreach(page ${pages} changelog.Debian)
  set(gz ${CMAKE_BINARY_DIR}/packaging/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
    COMMAND ${ATTENTION_LAB_GZIP} -9n -c ${PROJECT_SOURCE_DIR}/packaging/${page} > ${gz}
    DEPENDS ${PROJECT_SOURCE_DIR}/packaging/${page}
    COMMENT "Compressing ${page}")
  list(APPEND compressed ${gz})
endforeach()
add_custom_target(attention_lab_compressed_docs ALL DEPENDS ${compressed})
foreach(page ${pages})
  install(FILES ${CMAKE_BINARY_DIR}/packaging/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${ATTENTION_LAB_DOC})
# The README links to docs/: the reference goes beside it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${ATTENTION_LAB_DOC}/docs FILES_MATCHING PATTERN "*.md")
# Only a Debian package has these (the package preset turns this on).
option(ATTENTION_LAB_DEB_LAYOUT "Install the Debian copyright, changelog.Debian.gz and lintian overrides" OFF)
if(ATTENTION_LAB_DEB_LAYOUT)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
          DESTINATION ${ATTENTION_LAB_DOC})
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
          RENAME attention-lab)
endif()
