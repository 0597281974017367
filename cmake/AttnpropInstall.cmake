# Install rules and the CMake package so that another project can
#   find_package(attnprop REQUIRED)
#   target_link_libraries(app PRIVATE attnprop::attnprop)
include(CMakePackageConfigHelpers)

install(TARGETS attnprop_numeric attnprop_core attnprop attnprop_deps_numeric
        EXPORT attnpropTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnprop)
install(TARGETS attnprop_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY src/numeric src/util src/model src/attention src/analysis src/report
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnprop
        FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY models/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attnprop/models
        FILES_MATCHING PATTERN "*.json")
# The PyTorch and ONNX importer next to the models: PYTHONPATH=PREFIX/share/attnprop/python
# (docs/torch.md); it finds PREFIX/bin/attnprop by itself.
install(DIRECTORY python/attnprop_torch python/examples
        DESTINATION ${CMAKE_INSTALL_DATADIR}/attnprop/python
        FILES_MATCHING PATTERN "*.py")
install(EXPORT attnpropTargets NAMESPACE attnprop::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnprop)
configure_package_config_file(cmake/attnpropConfig.cmake.in
        ${PROJECT_BINARY_DIR}/attnpropConfig.cmake
        INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnprop)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnpropConfigVersion.cmake
        VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnpropConfig.cmake
              ${PROJECT_BINARY_DIR}/attnpropConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/attnprop)
